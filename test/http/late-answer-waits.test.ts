// A processor's late answer that lands while another call on the payment is in flight cannot be
// decided yet (src/engine/handlers/pipeline.ts recordLateAnswer): over HTTP its request is answered
// 503 late_answer_pending with Retry-After, never a bare 500, and a retry with the same
// Idempotency-Key, once the reconciler's second look recorded the answer, gets the payment as it
// took it, without a second refund at the processor. Engines on one store and a manual clock (two
// processes: in one, the reconciler would wait for the payment's lock).
import { afterAll, describe, expect, it } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { createServer } from "../../src/http/server.js";
import { processesOnOneStore } from "../engine/processes-on-one-store.js";

const { clock, simulators, newProcess, landsWhileAnotherInFlight } = processesOnOneStore({ reconcileGraceMs: 8_000 });
const engine = newProcess();
const other = newProcess();
const third = newProcess();
const apiKeys = createApiKeys(engine);
const app = createServer({ engine, apiKeys, simulators, logger: false });
await app.listen({ port: 0, host: "127.0.0.1" });
afterAll(() => app.close());
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
const account = "acct_late_http";
await engine.openAccount({ external_account_id: account, processor: "B" });
const { key } = await apiKeys.issue(account, "test");

async function post(path: string, body: object, idempotencyKey: string) {
  const res = await fetch(base + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": idempotencyKey },
    body: JSON.stringify({ external_account_id: account, ...body }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}
const refunds = () => simulators.ledger.entries().filter(([, r]) => r.call === "refund").length;

describe("a late answer that lands while another call on the payment is in flight, over HTTP", () => {
  it("503 late_answer_pending with Retry-After; the retry with its key, once the answer is recorded, gets the payment with it, one refund at the processor", { timeout: 10_000 }, async () => {
    const created = await post("/v2/payment/intent", { amount: "10.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_late" }, "create");
    const payment_id = created.body.payment_id as string;
    expect((await post("/v2/payment/auth", { payment_id }, "auth")).body.status).toBe("succeeded");
    const before = refunds();

    // refund A's call lands at 12 s, abandoned at 9 s by the other process's reconciler, while
    // refund B's, made at 10 s through the other process, is on its way until 25 s
    const { a: waiting, b } = await landsWhileAnotherInFlight(
      payment_id,
      () => post("/v2/payment/refund", { payment_id, amount: "4.00" }, "refund-a"),
      async () => expect((await other.reconcile()).resolved).toMatchObject([{ payment_id, processor: "never_received" }]),
      () => other.refund({ external_account_id: account, payment_id, amount: "3.00" }),
    );
    expect(waiting.status, JSON.stringify(waiting.body)).toBe(503);
    expect(waiting.body).toMatchObject({ code: "late_answer_pending", status: 503 });
    expect(waiting.body.detail).toMatch(/could not be recorded yet: another call \(att_\w+\) is in flight.*retry with the same Idempotency-Key/);
    expect(waiting.headers.get("retry-after")).toBe("30");
    expect(waiting.headers.get("content-type")).toMatch(/^application\/problem\+json/);

    // B answers at 25 s; the second look records A's answer on the payment as it then stands
    await clock.advance(13_000);
    await expect(b).resolves.toMatchObject({ amount_refunded: "3.00" });
    expect((await third.reconcile()).resolved).toMatchObject([{ payment_id, late: true, appended: ["PaymentRefunded"] }]);

    const retried = await post("/v2/payment/refund", { payment_id, amount: "4.00" }, "refund-a");
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body).toMatchObject({ payment_id, amount_refunded: "7.00" });
    expect(refunds() - before).toBe(2);
  });
});
