// A processor that acts but answers something the payment cannot take: an approval of 50.00 for an
// intent of 77.00 (a partial approval cardflow never asked for). The attempt is closed, and what
// the processor did (the hold, or the money captured) is kept beside the payment for an operator
// (LateAnswerUnapplied, reported by the audit until settled), never lost and never answered as done.
import { describe, expect, it } from "vitest";
import { audit } from "../../src/audit/audit.js";
import { systemClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { ProcessorAnswerUnapplied } from "../../src/errors.js";
import { randomIds } from "../../src/ids.js";
import type { AuthorizationOutcome, Processors } from "../../src/processors/port.js";
import { createSimulators } from "../../src/processors/simulator.js";

/** The simulators, but processor B's stored-card charge answers `outcome`. */
function answering(outcome: (amount: string) => AuthorizationOutcome): Processors {
  const sims = createSimulators({ clock: systemClock, ids: randomIds() });
  return {
    connect: (report) => sims.connect(report),
    get: (processor) => {
      const port = sims.get(processor);
      return processor === "B" ? { ...port, chargeStoredCard: async (req) => outcome(req.payment.intent.amount) } : port;
    },
  };
}

const authorization = (amount: string) => ({
  amount_authorized: amount,
  tip_amount: "0.00",
  donation_amount: "0.00",
  authorization_code: "123456",
  card: { type: "card_not_present" as const, brand: "visa", last_4: "4242", exp_month: "12", exp_year: 2030, cardholder_name: null, funding: "credit" as const },
  avs_response_code: null,
  avs_response_message: null,
});

async function charged(processors: Processors, capture_method: "manual" | "automatic") {
  const engine = createEngine({ processors });
  await engine.openAccount({ external_account_id: "acct_b", processor: "B" });
  const { payment_id } = await engine.createIntent({ external_account_id: "acct_b", amount: "77.00", payment_method_types: "card", capture_method, payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
  const error = await engine.authorize({ external_account_id: "acct_b", payment_id }).then(() => undefined, (e: unknown) => e);
  return { engine, payment_id, error };
}

describe("an answer that does not fit the payment", () => {
  for (const [capture_method, kind, type] of [["manual", "authorized", "PaymentAuthorized"], ["automatic", "captured", "PaymentCaptured"]] as const) {
    it(`${capture_method} capture: 50.00 ${kind} for 77.00 is recorded for an operator, answered 502, and the audit reports it`, async () => {
      const { engine, payment_id, error } = await charged(answering(() => ({ kind, authorization: authorization("50.00") })), capture_method);
      expect(error).toBeInstanceOf(ProcessorAnswerUnapplied);
      expect(error).toMatchObject({ status: 502, code: "processor_answer_unapplied" });
      expect((error as Error).message).toContain(`the processor acted on attempt att_`);
      expect((error as Error).message).toContain(`cardflow settle-late-answer ${payment_id} att_`);
      const beside = await engine.store.readStream(`late_answers-${payment_id}`);
      expect(beside.map((e) => e.type)).toEqual(["LateAnswerUnapplied"]);
      expect(beside[0]!.data).toMatchObject({ payment_id, attempt_type: "AuthorizationAttempted", answer: [{ type, data: capture_method === "automatic" ? { amount: "50.00" } : { amount_authorized: "50.00" } }] });
      // the payment itself is as before the call: it may be authorized again or canceled
      expect((await engine.getPayment({ external_account_id: "acct_b", payment_id })).status).toBe("requires_payment_method");
      await engine.projections.catchUp();
      const report = await audit({ store: engine.store, readModels: engine.readModels }, payment_id);
      expect(report.findings.map((f) => f.kind)).toEqual(["late_answer_unapplied"]);
      expect(report.findings[0]!.message).toMatch(/the processor acted on attempt att_\w+, but its answer did not fit the payment \(Payment(Authorized|Captured) /);
    });
  }

  it("learned by the reconciler (the call's answer lost, its lookup an approval of 50.00): recorded for an operator too", async () => {
    const sims = createSimulators({ clock: systemClock, ids: randomIds() });
    const processors: Processors = {
      connect: (report) => sims.connect(report),
      get: (processor) => ({
        ...sims.get(processor),
        chargeStoredCard: async () => Promise.reject(new Error("connection reset: the answer was lost")),
        lookup: async () => ({ call: "authorize", outcome: { kind: "authorized", authorization: authorization("50.00") } }),
      }),
    };
    const { engine, payment_id, error } = await charged(processors, "manual");
    expect(error).toMatchObject({ status: 503, code: "processor_unavailable" });
    // a dry run says what a pass would append, the record for an operator included, and appends nothing
    const dry = await engine.reconcile({ graceMs: 0, dryRun: true });
    expect(dry.resolved).toMatchObject([{ payment_id, appended: ["AttemptAbandoned", "LateAnswerUnapplied"], unapplied: true }]);
    expect(await engine.store.readStream(`late_answers-${payment_id}`)).toEqual([]);
    const pass = await engine.reconcile({ graceMs: 0 });
    expect(pass.resolved).toMatchObject([{ payment_id, open: "AuthorizationAttempted", appended: ["AttemptAbandoned", "LateAnswerUnapplied"], unapplied: true }]);
    expect((await engine.store.readStream(`late_answers-${payment_id}`))[0]!.data).toMatchObject({ answer: [{ type: "PaymentAuthorized", data: { amount_authorized: "50.00" } }] });
    expect((await engine.getPayment({ external_account_id: "acct_b", payment_id })).status).toBe("requires_payment_method");
  });

  it("a retry under the try's Idempotency-Key is answered 502 again, never with a second call (the processor acted); another key is another request", async () => {
    let calls = 0;
    const processors = answering(() => (calls++, { kind: "captured", authorization: authorization("50.00") }));
    const engine = createEngine({ processors });
    await engine.openAccount({ external_account_id: "acct_b", processor: "B" });
    const { payment_id } = await engine.createIntent({ external_account_id: "acct_b", amount: "77.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
    const tries = [];
    for (let i = 0; i < 3; i++) tries.push(await engine.authorize({ external_account_id: "acct_b", payment_id }, { idempotency_key: "order-42" }).then(() => undefined, (e: unknown) => e));
    expect(calls).toBe(1);
    for (const error of tries) expect(error).toMatchObject({ status: 502, code: "processor_answer_unapplied", message: (tries[0] as Error).message });
    expect((await engine.store.readStream(`payment-${payment_id}`)).filter((e) => e.type === "AuthorizationAttempted")).toHaveLength(1);
    // a new key is the merchant's new request: the payment may be authorized again
    await engine.authorize({ external_account_id: "acct_b", payment_id }, { idempotency_key: "order-42-again" }).catch(() => undefined);
    expect(calls).toBe(2);
  });

  it("so too when the reconciler learned the unfit answer: the retry under the lost call's key is answered 502, no second call", async () => {
    let charges = 0;
    const sims = createSimulators({ clock: systemClock, ids: randomIds() });
    const processors: Processors = {
      connect: (report) => sims.connect(report),
      get: (processor) => ({
        ...sims.get(processor),
        chargeStoredCard: async () => (charges++, Promise.reject(new Error("connection reset: the answer was lost"))),
        lookup: async () => ({ call: "authorize", outcome: { kind: "authorized", authorization: authorization("50.00") } }),
      }),
    };
    const engine = createEngine({ processors });
    await engine.openAccount({ external_account_id: "acct_b", processor: "B" });
    const { payment_id } = await engine.createIntent({ external_account_id: "acct_b", amount: "77.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
    const input = { external_account_id: "acct_b", payment_id };
    await expect(engine.authorize(input, { idempotency_key: "mm-1" })).rejects.toMatchObject({ status: 503 });
    await engine.reconcile({ graceMs: 0 });
    await expect(engine.authorize(input, { idempotency_key: "mm-1" })).rejects.toMatchObject({ status: 502, code: "processor_answer_unapplied" });
    expect(charges).toBe(1);
  });

  it("a decline moved nothing: it is the payment's failure, nothing is recorded beside the payment", async () => {
    const processors = answering(() => ({ kind: "failed", last_error: "declined", last_error_code: null }));
    const engine = createEngine({ processors });
    await engine.openAccount({ external_account_id: "acct_b", processor: "B" });
    const { payment_id } = await engine.createIntent({ external_account_id: "acct_b", amount: "77.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
    // a decline always fits an authorization: it is recorded as the payment's failure
    await expect(engine.authorize({ external_account_id: "acct_b", payment_id })).resolves.toBeDefined();
    expect(await engine.store.readStream(`late_answers-${payment_id}`)).toEqual([]);
  });
});
