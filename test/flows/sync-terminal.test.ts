// Spec §4.8 "Synchronous terminal, card present, save card": auth blocks until the shopper pays or
// cancels, up to 120 s (§8), and returns the outcome; card on file needs an expiry of 03/30 or later.
import { describe, expect, test } from "vitest";
import type { PaymentRecord } from "../../src/present/payment-record.js";
import { A, failureOf, refused, rig } from "./harness.js";

/** Starts a blocking auth and waits until the terminal is asking the shopper for the card. */
async function blockingAuth(r: Awaited<ReturnType<typeof rig>>, payment_id: string, terminal_id: string) {
  let settled = false;
  const result = r.engine.authorize({ external_account_id: A, payment_id, terminal_id }).finally(() => (settled = true));
  await r.sims.terminal.untilCollecting(terminal_id);
  return { result, settled: () => settled };
}

/** A blocking auth during which the shopper presents the card. */
async function payOnTerminal(r: Awaited<ReturnType<typeof rig>>, payment_id: string, terminal_id: string, cardNumber?: string): Promise<PaymentRecord> {
  const auth = await blockingAuth(r, payment_id, terminal_id);
  await r.sims.terminal.presentCard(terminal_id, cardNumber);
  return auth.result;
}

describe("synchronous terminal (processor A)", () => {
  test("save card: the blocking auth returns the captured payment with the card-on-file token in payment_method_id", async () => {
    const r = await rig();
    const terminal_id = await r.terminal("A_sync");
    const created = await r.intent(A, { capture_method: "automatic", external_customer_id: "cus_42", allow_saving_card: true });
    const auth = await blockingAuth(r, created.payment_id, terminal_id);
    expect(auth.settled()).toBe(false);
    await r.sims.terminal.presentCard(terminal_id, "4242424242424242");
    const record = await auth.result;

    expect(record).toMatchObject({ status: "succeeded", amount_captured: "10.00", external_customer_id: "cus_42", card_present: true });
    expect(record.payment_method_id).toMatch(/^pm_/);
    expect(record.payment).toMatchObject({ type: "card_present", last_4: "4242", payment_method_id: record.payment_method_id });
    const cards = await r.engine.listCustomerCards(A, "cus_42");
    expect(cards).toEqual([expect.objectContaining({ payment_method_id: record.payment_method_id, last_4: "4242", exp_month: "12", exp_year: 2030, payment_id: created.payment_id })]);

    // the token charges the card later (spec §4.8 "Stored-card charge")
    const charge = await r.intent(A, { payment_method_types: "card", capture_method: "automatic", payment_method_id: record.payment_method_id!, external_customer_id: "cus_42", amount: "4.50" });
    expect(charge.status).toBe("requires_payment_method");
    const charged = await r.engine.authorize({ external_account_id: A, payment_id: charge.payment_id });
    expect(charged).toMatchObject({ status: "succeeded", amount_captured: "4.50", card_present: false });
    expect(charged.payment).toMatchObject({ type: "card_not_present", last_4: "4242" });
  });

  test("manual capture: the auth returns requires_capture; the card is saved after capture, not before (spec §4.6)", async () => {
    const r = await rig();
    const terminal_id = await r.terminal("A_sync");
    const { payment_id } = await r.intent(A, { capture_method: "manual", external_customer_id: "cus_7", allow_saving_card: true });
    expect(await payOnTerminal(r, payment_id, terminal_id)).toMatchObject({ status: "requires_capture", amount_captured: "0.00", payment_method_id: null });

    const early = await refused(r.engine.saveCard({ external_account_id: A, payment_id, external_customer_id: "cus_7" }));
    expect(early).toMatchObject({ status: 409, code: "payment_intent_unexpected_state" });
    await r.engine.capture({ external_account_id: A, payment_id, amount: "10.00" });
    const saved = await r.engine.saveCard({ external_account_id: A, payment_id, external_customer_id: "cus_7" });
    expect((await r.get(A, payment_id)).payment_method_id).toBe(saved.payment_method_id);
  });

  test("engine.close() ends a blocking auth still waiting for its shopper with EngineClosed (503 service_stopping), not up to 120 s later; nothing more is appended", async () => {
    const r = await rig();
    const terminal_id = await r.terminal("A_sync");
    const { payment_id } = await r.intent(A, { capture_method: "automatic" });
    const auth = await blockingAuth(r, payment_id, terminal_id);
    await r.engine.close();
    await expect(auth.result).rejects.toMatchObject({ name: "EngineClosed", status: 503, code: "service_stopping" });
    // no shopper's timeout recorded: the terminal's outcome is the reconciler's
    expect((await r.engine.store.readAll()).filter((e) => e.stream.endsWith(payment_id)).map((e) => e.type).at(-1)).toBe("TerminalAuthorizationStarted");
  });

  test("the 120-second limit: the auth blocks until then, then returns requires_payment_method with USER_TIMEOUT (injected clock)", async () => {
    // the terminal itself would wait longer: the engine's 120 s limit decides
    const r = await rig({ simulators: { shopperTimeoutMs: 600_000 } });
    const terminal_id = await r.terminal("A_sync");
    const { payment_id } = await r.intent(A, { capture_method: "automatic" });
    const auth = await blockingAuth(r, payment_id, terminal_id);

    await r.clock.advance(119_999);
    expect(auth.settled()).toBe(false);
    expect((await r.get(A, payment_id)).status).toBe("payment_method_requested");
    await r.clock.advance(1);
    expect(auth.settled()).toBe(true);
    expect(failureOf(await auth.result)).toEqual({ status: "requires_payment_method", last_error: "Timed out waiting for shopper", last_error_code: "USER_TIMEOUT" });
    // the terminal was stopped, so it is free for the retry
    expect(r.sims.terminal.collecting(terminal_id)).toBeUndefined();
    expect((await payOnTerminal(r, payment_id, terminal_id)).status).toBe("succeeded");
  });

  test.each([
    ["the engine's limit, configured to 30 s", { engine: { syncAuthTimeoutMs: 30_000 } }, 30_000],
    ["the terminal's own shopper timeout (45 s) before the engine's 120 s", { simulators: { shopperTimeoutMs: 45_000 } }, 45_000],
  ] as const)("%s ends the blocking auth the same way", async (_, options, ms) => {
    const r = await rig(options);
    const terminal_id = await r.terminal("A_sync");
    const { payment_id } = await r.intent(A, { capture_method: "manual" });
    const auth = await blockingAuth(r, payment_id, terminal_id);
    await r.clock.advance(ms - 1);
    expect(auth.settled()).toBe(false);
    await r.clock.advance(1);
    expect(failureOf(await auth.result)).toMatchObject({ status: "requires_payment_method", last_error_code: "USER_TIMEOUT" });
  });

  test("the shopper cancels or the clerk cancels: the blocking auth returns requires_payment_method", async () => {
    const r = await rig();
    const terminal_id = await r.terminal("A_sync");
    const { payment_id } = await r.intent(A, { capture_method: "automatic" });
    expect(failureOf(await payOnTerminal(r, payment_id, terminal_id, "4000000000000176"))).toEqual({ status: "requires_payment_method", last_error: "Canceled by shopper", last_error_code: "USER_CANCEL" });
    const byClerk = await blockingAuth(r, payment_id, terminal_id);
    await r.sims.terminal.clerkCancel(terminal_id);
    expect(failureOf(await byClerk.result)).toEqual({ status: "requires_payment_method", last_error: "Canceled by clerk", last_error_code: "POS_CANCEL" });
  });

  test("terminal busy: while one auth blocks, another payment's auth on the terminal is refused at once", async () => {
    const r = await rig();
    const terminal_id = await r.terminal("A_sync");
    const first = await r.intent(A, { capture_method: "automatic" });
    const second = await r.intent(A, { capture_method: "automatic" });
    const auth = await blockingAuth(r, first.payment_id, terminal_id);
    expect(await refused(r.engine.authorize({ external_account_id: A, payment_id: second.payment_id, terminal_id }))).toMatchObject({ status: 409, code: "terminal_busy" });
    await r.sims.terminal.presentCard(terminal_id);
    expect((await auth.result).status).toBe("succeeded");
    expect((await payOnTerminal(r, second.payment_id, terminal_id)).status).toBe("succeeded");
  });

  test("a decline returns error; the retry with another card succeeds", async () => {
    const r = await rig();
    const terminal_id = await r.terminal("A_sync");
    const { payment_id } = await r.intent(A, { capture_method: "automatic" });
    expect(failureOf(await payOnTerminal(r, payment_id, terminal_id, "4000000000000002"))).toEqual({ status: "error", last_error: "Your card was declined", last_error_code: undefined });
    const record = await payOnTerminal(r, payment_id, terminal_id, "5555555555554444");
    expect(record).toMatchObject({ status: "succeeded", amount_captured: "10.00" });
    expect(record.last_error).toBeUndefined();
    expect(record.last_error_code).toBeUndefined();
  });

  test("a retry under a try's Idempotency-Key after another key moved the payment on gets that try's outcome (USER_TIMEOUT), not the payment as it is now", async () => {
    const r = await rig();
    const terminal_id = await r.terminal("A_sync");
    const { payment_id } = await r.intent(A, { capture_method: "manual" });
    const auth = (idempotency_key: string) => r.engine.authorize({ external_account_id: A, payment_id, terminal_id }, { idempotency_key });
    const first = auth("auth-1");
    await r.sims.terminal.untilCollecting(terminal_id);
    await r.clock.advance(120_000);
    const timedOut = await first;
    expect(timedOut).toMatchObject({ status: "requires_payment_method", last_error_code: "USER_TIMEOUT" });
    // another key: a collection of its own, declined
    const second = auth("auth-2");
    await r.sims.terminal.untilCollecting(terminal_id);
    await r.sims.terminal.presentCard(terminal_id, "4000000000000002");
    expect((await second).status).toBe("error");

    const retry = await auth("auth-1");
    expect(retry).toEqual(timedOut);
    expect(r.sims.terminal.collecting(terminal_id)).toBeUndefined();
    expect((await r.get(A, payment_id)).status).toBe("error");
  });
});

describe("card on file needs an expiry of 03/30 or later (spec §4.8)", () => {
  async function payAndSave(cardNumber: string) {
    const r = await rig();
    const terminal_id = await r.terminal("A_sync");
    const { payment_id } = await r.intent(A, { capture_method: "automatic", external_customer_id: "cus_exp", allow_saving_card: true });
    return { r, payment_id, record: await payOnTerminal(r, payment_id, terminal_id, cardNumber) };
  }

  test("a card expiring 03/2030 is saved", async () => {
    const { r, record } = await payAndSave("4000000000000085");
    expect(record.payment).toMatchObject({ exp_month: "03", exp_year: 2030 });
    expect(record.payment_method_id).toMatch(/^pm_/);
    expect(await r.engine.listCustomerCards(A, "cus_exp")).toHaveLength(1);
  });

  test("a card expiring 02/2030 is paid but not saved; saving it explicitly is refused naming the rule", async () => {
    const { r, payment_id, record } = await payAndSave("4000000000000077");
    expect(record).toMatchObject({ status: "succeeded", payment_method_id: null });
    expect(await r.engine.listCustomerCards(A, "cus_exp")).toEqual([]);
    const error = await refused(r.engine.saveCard({ external_account_id: A, payment_id, external_customer_id: "cus_exp" }));
    expect(error).toMatchObject({ status: 402, code: "card_not_savable" });
    expect(error.message).toContain("03/30 or later");
  });
});
