// A processor call whose answer was lost (a timeout: the processor may have acted), over real HTTP
// with the sandbox's injected fault. Once a refund retried with its Idempotency-Key after the
// reconciler had settled the first try refunded a second time. Now the first try is answered
// 503 processor_unavailable with Retry-After (nothing is known yet), and a retry with the same
// key is answered from the store: 503 again while the attempt is open, then the payment as the
// reconciler settled it; the processor is never called a second time for that request.
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { manualClock } from "../../src/clock.js";
import { createServer } from "../../src/http/server.js";
import { sequentialIds } from "../../src/ids.js";
import { createObservedEngine } from "../../src/observability/index.js";
import { memorySide } from "../../src/processors/processor-side.js";
import { createSimulators } from "../../src/processors/simulator.js";

const clock = manualClock();
const ids = sequentialIds();
const side = memorySide();
const simulators = createSimulators({ clock, ids, side });
// observed as `npm start` serves it: the request log and the command counts
const { engine, metrics, notes } = createObservedEngine({ clock, ids, processors: simulators });
const apiKeys = createApiKeys(engine);
const log: Record<string, unknown>[] = [];
const logger = pino({ level: "info" }, new Writable({ write: (chunk, _enc, done) => (log.push(JSON.parse(String(chunk))), done()) }));
const app = createServer({ engine, apiKeys, simulators, logger, metrics, notes });
await app.listen({ port: 0, host: "127.0.0.1" });
afterAll(async () => {
  await app.close();
  await engine.close();
});
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
await engine.openAccount({ external_account_id: "acct_u", processor: "A" });
const { key } = await apiKeys.issue("acct_u", "test");

async function post(path: string, body: object, idempotencyKey: string | null) {
  const res = await fetch(base + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(idempotencyKey === null ? {} : { "idempotency-key": idempotencyKey }) },
    body: JSON.stringify({ external_account_id: "acct_u", ...body }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}
const lose = (what: "answer" | "request" | null) => side.set("faults", "calls", what ? { lose: what, rate: 1 } : undefined);
const loseAnswers = (on: boolean) => lose(on ? "answer" : null);
const calls = (call: string) => simulators.ledger.entries().filter(([, r]) => r.call === call).length;

describe("a processor call whose answer was lost, retried with the same Idempotency-Key", () => {
  it("a partial refund: 503 processor_unavailable, the reconciler settles it, the retry answers from the store and refunds nothing more", async () => {
    const created = await post("/v2/payment/intent", { amount: "10.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_u" }, "create");
    expect(created.status).toBe(200);
    const payment_id = created.body.payment_id as string;
    expect((await post("/v2/payment/auth", { payment_id }, "auth")).body.status).toBe("succeeded");

    loseAnswers(true);
    const first = await post("/v2/payment/refund", { payment_id, amount: "3.00" }, "refund-1");
    loseAnswers(false);
    expect(first.status, JSON.stringify(first.body)).toBe(503);
    expect(first.body.code).toBe("processor_unavailable");
    expect(first.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(first.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(calls("refund")).toBe(1); // the processor acted; cardflow does not know it yet

    // before the reconciler: the retry is told the same, the processor is not called again
    const early = await post("/v2/payment/refund", { payment_id, amount: "3.00" }, "refund-1");
    expect([early.status, early.body.code]).toEqual([503, "processor_unavailable"]);
    expect(calls("refund")).toBe(1);

    const pass = await engine.reconcile({ graceMs: 0 });
    expect(pass.resolved.map((r) => r.appended)).toEqual([["PaymentRefunded"]]);

    const retried = await post("/v2/payment/refund", { payment_id, amount: "3.00" }, "refund-1");
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.headers.get("idempotent-replayed")).toBe("true"); // what the first try did, not a new effect
    expect(retried.body.amount_refunded).toBe("3.00");
    expect(calls("refund")).toBe(1);
    // no command ran: logged and counted as a replay, as a kept answer sent again (README: Logs)
    expect(log.find((l) => l.request_id === Number(retried.headers.get("request-id")))).toMatchObject({ command: null, outcome: "replayed", payment_id });
    const refunds = (await metrics.commands.get()).values.filter((v) => v.labels.command === "refund");
    expect(refunds.map((v) => [v.labels.outcome, v.value])).toEqual([["processor_unavailable", 2]]);
    // and again: the answer the retry got is now the key's kept answer
    const again = await post("/v2/payment/refund", { payment_id, amount: "3.00" }, "refund-1");
    expect([again.status, again.headers.get("idempotent-replayed"), again.body]).toEqual([200, "true", retried.body]);

    // another key is another refund
    const second = await post("/v2/payment/refund", { payment_id, amount: "3.00" }, "refund-2");
    expect([second.status, second.body.amount_refunded]).toEqual([200, "6.00"]);
    expect(calls("refund")).toBe(2);
  });

  it("a refund whose request never reached the processor: the reconciler abandons the attempt, and the retry refunds (once)", async () => {
    const created = await post("/v2/payment/intent", { amount: "10.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_u" }, "create-lost");
    const payment_id = created.body.payment_id as string;
    expect((await post("/v2/payment/auth", { payment_id }, "auth-lost")).body.status).toBe("succeeded");
    const before = calls("refund");

    lose("request");
    const first = await post("/v2/payment/refund", { payment_id, amount: "4.00" }, "refund-lost");
    lose(null);
    expect([first.status, first.body.code]).toEqual([503, "processor_unavailable"]);
    const pass = await engine.reconcile({ graceMs: 0 });
    expect(pass.resolved.map((r) => r.appended)).toEqual([["AttemptAbandoned"]]);

    const retried = await post("/v2/payment/refund", { payment_id, amount: "4.00" }, "refund-lost");
    expect([retried.status, retried.headers.get("idempotent-replayed"), retried.body.amount_refunded]).toEqual([200, "false", "4.00"]);
    expect(calls("refund")).toBe(before + 1);
  });

  it("the 503's advice: the same Idempotency-Key when the request carried one, else to read the payment first (there is no key to retry with)", async () => {
    const charged = async (n: number) => {
      const created = await post("/v2/payment/intent", { amount: "10.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_u" }, `create-advice-${n}`);
      expect((await post("/v2/payment/auth", { payment_id: created.body.payment_id }, `auth-advice-${n}`)).body.status).toBe("succeeded");
      return created.body.payment_id as string;
    };
    const [one, two] = [await charged(1), await charged(2)];
    loseAnswers(true);
    const keyed = await post("/v2/payment/refund", { payment_id: one, amount: "1.00" }, "refund-advice");
    const bare = await post("/v2/payment/refund", { payment_id: two, amount: "1.00" }, null);
    loseAnswers(false);
    expect([keyed.status, bare.status]).toEqual([503, 503]);
    expect(keyed.body.detail).toMatch(/it is settled with the processor shortly: retry with the same Idempotency-Key$/);
    expect(bare.body.detail).toMatch(/it is settled with the processor shortly: read the payment before sending this request again \(it carried no Idempotency-Key: sent again without one, it may act twice\)$/);
    await engine.reconcile({ graceMs: 0 });
  });
});
