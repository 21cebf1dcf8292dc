// A processor call whose answer was lost, retried with its Idempotency-Key through ANOTHER server
// on the same store (a second process: its own cache of the payment, from before the first try).
// Found by the chaos history checker: such a retry of a capture was answered 200 Idempotent-Replayed
// with the payment still requires_capture, nothing captured. While the attempt is open the retry
// is answered 503 processor_unavailable again and the processor is not called; once the reconciler
// settled it, the retry answers the payment as that outcome left it; abandoned, it acts anew.
import { afterAll, describe, expect, it } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { createServer } from "../../src/http/server.js";
import { sequentialIds } from "../../src/ids.js";
import { memorySide } from "../../src/processors/processor-side.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createMemoryStore } from "../../src/store/memory/index.js";

const clock = manualClock();
const side = memorySide();
const simulators = createSimulators({ clock, ids: sequentialIds(900_000_000), side });
const store = createMemoryStore();

/** One server process: its own engine (and so its own cache of payments) on the shared store. */
async function serverProcess(seed: number) {
  const engine = createEngine({ store, clock, ids: sequentialIds(seed), processors: simulators });
  const app = createServer({ engine, apiKeys: createApiKeys(engine), simulators, logger: false });
  await app.listen({ port: 0, host: "127.0.0.1" });
  return { engine, app, base: `http://127.0.0.1:${(app.server.address() as { port: number }).port}` };
}
const first = await serverProcess(0);
const other = await serverProcess(100_000_000);
afterAll(async () => {
  for (const p of [first, other]) {
    await p.app.close();
    await p.engine.close();
  }
});
await first.engine.openAccount({ external_account_id: "acct_p", processor: "A" });
const { key } = await createApiKeys(first.engine).issue("acct_p", "test");

async function post(server: { base: string }, path: string, body: object, idempotencyKey: string) {
  const res = await fetch(server.base + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": idempotencyKey },
    body: JSON.stringify({ external_account_id: "acct_p", ...body }),
  });
  return { status: res.status, replayed: res.headers.get("idempotent-replayed"), retryAfter: res.headers.get("retry-after"), body: (await res.json()) as any };
}
const lose = (what: "answer" | "request" | null) => side.set("faults", "calls", what ? { lose: what, rate: 1 } : undefined);
const calls = (call: string) => simulators.ledger.entries().filter(([, r]) => r.call === call).length;
let n = 0;

/** A stored-card payment made through `other` (which so caches it), as far as `until`. */
async function payment(capture_method: "manual" | "automatic", until: "created" | "authorized") {
  const tag = ++n;
  const created = await post(other, "/v2/payment/intent", { amount: "10.00", payment_method_types: "card", capture_method, payment_method_id: "pm_card_visa", external_customer_id: "cus_p" }, `create-${tag}`);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const payment_id = created.body.payment_id as string;
  if (until === "authorized") expect((await post(other, "/v2/payment/auth", { payment_id }, `auth-${tag}`)).status).toBe(200);
  return { payment_id, tag };
}

/** The first try through `first` with its answer lost: 503, the processor acted once. */
async function lostThroughFirst(path: string, body: object, idempotencyKey: string, call: string) {
  const before = calls(call);
  lose("answer");
  const tried = await post(first, path, body, idempotencyKey);
  lose(null);
  expect([tried.status, tried.body.code], JSON.stringify(tried.body)).toEqual([503, "processor_unavailable"]);
  expect(calls(call)).toBe(before + 1);
  return before + 1;
}

/** While the attempt is open, the retry through `other` is told the same and calls nothing. */
async function retryWhileOpen(path: string, body: object, idempotencyKey: string, call: string, count: number) {
  const early = await post(other, path, body, idempotencyKey);
  expect([early.status, early.body.code, early.replayed], JSON.stringify(early.body)).toEqual([503, "processor_unavailable", null]);
  expect(early.retryAfter).toMatch(/^\d+$/);
  expect(calls(call)).toBe(count);
}

/** The reconciler (of the first process) learns the outcome from the processor. */
async function settle(payment_id: string, expected: string[]) {
  const pass = await first.engine.reconcile({ graceMs: 0 });
  expect(pass.resolved.filter((r) => r.payment_id === payment_id).map((r) => r.appended)).toEqual([expected]);
}

describe("a lost processor answer retried with the same Idempotency-Key through another process", () => {
  for (const [what, amount, captured] of [["a full capture", "10.00", "10.00"], ["a partial capture", "4.00", "4.00"]] as const) {
    it(`${what}: 503 while open, then the payment as captured, the processor called once`, async () => {
      const { payment_id, tag } = await payment("manual", "authorized");
      const body = { payment_id, amount };
      const count = await lostThroughFirst("/v2/payment/capture", body, `capture-${tag}`, "capture");
      await retryWhileOpen("/v2/payment/capture", body, `capture-${tag}`, "capture", count);
      await settle(payment_id, ["PaymentCaptured"]);
      const retried = await post(other, "/v2/payment/capture", body, `capture-${tag}`);
      expect([retried.status, retried.replayed, retried.body.status, retried.body.amount_captured], JSON.stringify(retried.body)).toEqual([200, "true", "succeeded", captured]);
      expect(calls("capture")).toBe(count);
    });
  }

  it("an authorization: 503 while open, then the payment as authorized", async () => {
    const { payment_id, tag } = await payment("manual", "created");
    const count = await lostThroughFirst("/v2/payment/auth", { payment_id }, `auth-lost-${tag}`, "authorize");
    await retryWhileOpen("/v2/payment/auth", { payment_id }, `auth-lost-${tag}`, "authorize", count);
    await settle(payment_id, ["PaymentAuthorized"]);
    const retried = await post(other, "/v2/payment/auth", { payment_id }, `auth-lost-${tag}`);
    expect([retried.status, retried.replayed, retried.body.status, retried.body.amount_authorized], JSON.stringify(retried.body)).toEqual([200, "true", "requires_capture", "10.00"]);
    expect(calls("authorize")).toBe(count);
  });

  it("a refund: 503 while open, then the payment as refunded", async () => {
    const { payment_id, tag } = await payment("automatic", "authorized");
    const body = { payment_id, amount: "2.50" };
    const count = await lostThroughFirst("/v2/payment/refund", body, `refund-${tag}`, "refund");
    await retryWhileOpen("/v2/payment/refund", body, `refund-${tag}`, "refund", count);
    await settle(payment_id, ["PaymentRefunded"]);
    const retried = await post(other, "/v2/payment/refund", body, `refund-${tag}`);
    expect([retried.status, retried.replayed, retried.body.amount_refunded], JSON.stringify(retried.body)).toEqual([200, "true", "2.50"]);
    expect(calls("refund")).toBe(count);
  });

  it("a cancel of an authorization (a void): 503 while open, then the payment as canceled", async () => {
    const { payment_id, tag } = await payment("manual", "authorized");
    const count = await lostThroughFirst("/v2/payment/cancel", { payment_id }, `cancel-${tag}`, "void");
    await retryWhileOpen("/v2/payment/cancel", { payment_id }, `cancel-${tag}`, "void", count);
    await settle(payment_id, ["PaymentCanceled"]);
    const retried = await post(other, "/v2/payment/cancel", { payment_id }, `cancel-${tag}`);
    expect([retried.status, retried.replayed, retried.body.status], JSON.stringify(retried.body)).toEqual([200, "true", "canceled"]);
    expect(calls("void")).toBe(count);
  });

  it("the retry answers what its own outcome gave, not what another request did after it", async () => {
    const { payment_id, tag } = await payment("manual", "authorized");
    const count = await lostThroughFirst("/v2/payment/capture", { payment_id, amount: "10.00" }, `capture-${tag}`, "capture");
    await settle(payment_id, ["PaymentCaptured"]);
    const refunded = await post(other, "/v2/payment/refund", { payment_id, amount: "3.00" }, `refund-after-${tag}`);
    expect([refunded.status, refunded.body.amount_refunded]).toEqual([200, "3.00"]);
    const retried = await post(other, "/v2/payment/capture", { payment_id, amount: "10.00" }, `capture-${tag}`);
    expect([retried.status, retried.replayed, retried.body.status, retried.body.amount_captured, retried.body.amount_refunded], JSON.stringify(retried.body)).toEqual([200, "true", "succeeded", "10.00", "0.00"]);
    expect(calls("capture")).toBe(count);
  });

  it("a capture whose request never reached the processor: abandoned, the retry captures (once)", async () => {
    const { payment_id, tag } = await payment("manual", "authorized");
    const before = calls("capture");
    lose("request");
    const tried = await post(first, "/v2/payment/capture", { payment_id, amount: "10.00" }, `capture-${tag}`);
    lose(null);
    expect([tried.status, tried.body.code]).toEqual([503, "processor_unavailable"]);
    await settle(payment_id, ["AttemptAbandoned"]);
    const retried = await post(other, "/v2/payment/capture", { payment_id, amount: "10.00" }, `capture-${tag}`);
    expect([retried.status, retried.replayed, retried.body.status, retried.body.amount_captured], JSON.stringify(retried.body)).toEqual([200, "false", "succeeded", "10.00"]);
    expect(calls("capture")).toBe(before + 1);
  });
});
