// Every flow of spec §4.8 over real HTTP, each answer checked field by field against the schemas
// of §2.1 / §4.3 (strict: no field more, none missing, every type right) and for its values.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ClientIntentOut, CreatedIntentOut, CustomerCardListOut, CustomerCardOut, PaymentRecordOut, TerminalListOut, TerminalOut } from "../../src/http/schemas.js";
import { expectProblem, expectShape, startApi, type Api, type Merchant } from "./harness.js";

let api: Api;
beforeEach(async () => {
  api = await startApi();
});
afterEach(async () => {
  await api.close();
});

const T0 = "2026-01-01T00:00:00.000+00:00";

/** Polls the status read (as a client would) until the status is no longer `status`. */
async function pollWhile(m: Merchant, paymentId: string, status: string) {
  for (let i = 0; i < 200; i++) {
    const res = await m.read(paymentId);
    expect(res.status).toBe(200);
    if (res.body.status !== status) return expectShape(PaymentRecordOut("v2"), res.body);
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`still ${status}`);
}

const untilCollecting = (terminalId: string) => api.simulators.terminal.untilCollecting(terminalId);

describe("asynchronous terminal, card present (/v2)", () => {
  it("create, auth returns payment_method_requested, poll, the terminal collects, capture", async () => {
    const m = await api.merchant("acct_async");
    const terminal = await m.terminal("A_async");

    const created = await m.post("/v2/payment/intent", { amount: 25.5, payment_method_types: "card_present", capture_method: "manual", external_payment_id: 9001 });
    expect(created.status).toBe(200);
    const intent = expectShape(CreatedIntentOut("v2"), created.body);
    expect(intent.status).toBe("requires_payment_method");
    expect(intent.external_transaction_id).toBe(9001);
    expect(intent.request_id).toBe(Number(created.headers.get("request-id")));
    expect(intent.payment_id).toMatch(/^pi_/);

    const auth = await m.post("/v2/payment/auth", { payment_id: intent.payment_id, terminal_id: terminal });
    expect(auth.status).toBe(200);
    const pending = expectShape(PaymentRecordOut("v2"), auth.body);
    expect(pending).toMatchObject({ status: "payment_method_requested", terminal_id: terminal, amount: "25.50", amount_authorized: "0.00", card_present: true });
    expect(pending.payment).toBeUndefined();

    // still waiting for the shopper: the poll answers the same status
    expect((await m.read(intent.payment_id)).body.status).toBe("payment_method_requested");
    const presented = await m.post("/sim/terminal/present-card", { terminal_id: terminal, card_number: "4242424242424242" });
    expect(presented.status).toBe(200);

    const authorized = await pollWhile(m, intent.payment_id, "payment_method_requested");
    expect(authorized).toEqual({
      payment_id: intent.payment_id,
      date_created: T0,
      external_transaction_id: 9001,
      status: "requires_capture",
      amount: "25.50",
      amount_authorized: "25.50",
      amount_captured: "0.00",
      amount_capturable: "25.50",
      amount_refunded: "0.00",
      amount_refundable: "0.00",
      tip_amount: "0.00",
      donation_amount: "0.00",
      currency: "USD",
      card_present: true,
      payment_method_id: null,
      notes: null,
      authorization_code: expect.stringMatching(/^[0-9A-Z]{6}$/),
      processor: "A",
      funding_source: "credit",
      payment: { type: "card_present", brand: "visa", last_4: "4242", exp_month: "12", exp_year: 2030, cardholder_name: "TEST CARDHOLDER", receipt_data: null, payment_method_id: null },
      avs_response_code: 0,
      avs_response_message: "Address and postal code match",
      request_id: expect.any(Number),
      external_account_id: "acct_async",
      external_customer_id: null,
      capture_method: "manual",
      payment_method_types: "card_present",
      terminal_id: terminal,
    });

    const captured = await m.post("/v2/payment/capture", { payment_id: intent.payment_id, amount: "25.50" });
    expect(captured.status).toBe(200);
    const done = expectShape(PaymentRecordOut("v2"), captured.body);
    expect(done).toMatchObject({ status: "succeeded", amount_captured: "25.50", amount_capturable: "0.00", amount_refundable: "25.50" });
    expect(done.request_id).toBe(Number(captured.headers.get("request-id")));
    // a status read answers under its own Request-Id; the record's request_id is the last change's (README: Logs)
    const read = await m.read(intent.payment_id);
    expect(Number(read.headers.get("request-id"))).toBeGreaterThan(done.request_id);
    expect(read.body).toEqual(done);
  });

  it("automatic capture: captured on the terminal (succeeded) or capture requested (capture_requested)", async () => {
    const m = await api.merchant("acct_auto");
    const terminal = await m.terminal("A_async");
    for (const [capture, status] of [["on_terminal", "succeeded"], ["requested", "capture_requested"], ["separately", "succeeded"]] as const) {
      const { body: intent } = await m.post("/v2/payment/intent", { amount: "10", payment_method_types: "card_present", capture_method: "automatic" });
      await m.post("/v2/payment/auth", { payment_id: intent.payment_id, terminal_id: terminal });
      await m.post("/sim/terminal/present-card", { terminal_id: terminal, capture });
      const after = await pollWhile(m, intent.payment_id, "payment_method_requested");
      expect(after.status).toBe(status);
      expect(after.amount_authorized).toBe("10.00");
    }
  });

  it("timeout, clerk cancel and decline leave last_error and last_error_code; auth may be retried", async () => {
    const m = await api.merchant("acct_fail");
    const terminal = await m.terminal("A_async");
    const { body: intent } = await m.post("/v2/payment/intent", { amount: "7.00", payment_method_types: "card_present", capture_method: "manual" });

    await m.post("/v2/payment/auth", { payment_id: intent.payment_id, terminal_id: terminal });
    await api.clock.advance(120_000); // the shopper never comes
    let after = await pollWhile(m, intent.payment_id, "payment_method_requested");
    expect(after).toMatchObject({ status: "requires_payment_method", last_error: "Timed out waiting for shopper", last_error_code: "USER_TIMEOUT" });

    await m.post("/v2/payment/auth", { payment_id: intent.payment_id, terminal_id: terminal });
    const cancel = await m.post("/sim/terminal/clerk-cancel", { terminal_id: terminal });
    expect(cancel.status).toBe(200);
    after = expectShape(PaymentRecordOut("v2"), (await m.read(intent.payment_id)).body);
    expect(after).toMatchObject({ status: "requires_payment_method", last_error: "Canceled by clerk", last_error_code: "POS_CANCEL" });

    await m.post("/v2/payment/auth", { payment_id: intent.payment_id, terminal_id: terminal });
    await m.post("/sim/terminal/present-card", { terminal_id: terminal, card_number: "4000000000000143" });
    after = expectShape(PaymentRecordOut("v2"), (await m.read(intent.payment_id)).body);
    expect(after).toMatchObject({ status: "error", last_error: "The processor declined the card", last_error_code: "ONLINE_DECLINED" });

    // retry from error with another card
    const retry = await m.post("/v2/payment/auth", { payment_id: intent.payment_id, terminal_id: terminal });
    expect(retry.body.status).toBe("payment_method_requested");
    expect(retry.body.last_error).toBeUndefined();
    await m.post("/sim/terminal/present-card", { terminal_id: terminal, card_number: "5555555555554444" });
    after = expectShape(PaymentRecordOut("v2"), (await m.read(intent.payment_id)).body);
    expect(after).toMatchObject({ status: "requires_capture", payment: { brand: "mastercard", last_4: "4444" } });
  });
});

describe("synchronous terminal, card present, save card (/v1)", () => {
  it("auth blocks until the shopper pays; the token is in payment_method_id; then a stored-card charge with it", async () => {
    const m = await api.merchant("acct_sync");
    const terminal = await m.terminal("A_sync");
    const created = await m.post("/v1/payment/intent", {
      amount: "42.00",
      payment_method_types: "card_present",
      capture_method: "automatic",
      external_customer_id: "cus_7",
      allow_saving_card: true,
      external_transaction_id: "order-7",
    });
    const intent = expectShape(CreatedIntentOut("v1"), created.body);
    expect(intent).toMatchObject({ status: "requires_payment_method", external_transaction_id: "order-7" });

    const blocking = m.post("/v1/payment/auth", { payment_id: intent.payment_id, terminal_id: terminal });
    await untilCollecting(terminal);
    await m.post("/sim/terminal/present-card", { terminal_id: terminal, card_number: "5555555555554444" });
    const auth = await blocking;
    expect(auth.status).toBe(200);
    const paid = expectShape(PaymentRecordOut("v1"), auth.body);
    expect(paid).toMatchObject({ status: "success", amount_captured: "42.00", amount_refundable: "42.00", external_customer_id: "cus_7" });
    expect(paid.payment_method_id).toMatch(/^pm_/);
    expect(paid.payment).toMatchObject({ type: "card_present", brand: "mastercard", last_4: "4444", payment_method_id: paid.payment_method_id });

    const cards = await m.get(`/v1/customer/card?external_account_id=acct_sync&external_customer_id=cus_7`);
    expect(expectShape(CustomerCardListOut, cards.body).data).toEqual([
      expect.objectContaining({ payment_method_id: paid.payment_method_id, external_customer_id: "cus_7", brand: "mastercard", last_4: "4444", payment_id: intent.payment_id }),
    ]);

    // the card on file charges a card-not-present payment
    const { body: again } = await m.post("/v1/payment/intent", {
      amount: 5,
      payment_method_types: "card",
      capture_method: "automatic",
      payment_method_id: paid.payment_method_id,
      external_customer_id: "cus_7",
    });
    const charged = await m.post("/v1/payment/auth", { payment_id: again.payment_id });
    expect(expectShape(PaymentRecordOut("v1"), charged.body)).toMatchObject({ status: "success", card_present: false, payment: { type: "card_not_present", last_4: "4444" } });

    // saving that charge's card for its customer answers the card on file, as its own payment saved it (nothing appended)
    const resaved = await m.post("/v1/customer/card", { payment_id: again.payment_id, external_customer_id: "cus_7" });
    expect([resaved.status, resaved.body]).toEqual([200, cards.body.data[0]]);
    expect((await m.post("/v1/customer/card", { payment_id: again.payment_id, external_customer_id: "cus_8" })).body).toMatchObject({ status: 409, detail: expect.stringContaining(`it charges the card on file ${paid.payment_method_id}, which is saved already`) });
    // a test token is no card saved here: 409 all the same
    const { body: test } = await m.post("/v1/payment/intent", { amount: 5, payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_7" });
    await m.post("/v1/payment/auth", { payment_id: test.payment_id });
    expect((await m.post("/v1/customer/card", { payment_id: test.payment_id, external_customer_id: "cus_7" })).body).toMatchObject({ status: 409, detail: expect.stringContaining("it charges the card on file pm_card_visa, which is saved already") });
    expect((await m.read(again.payment_id)).body).toMatchObject({ status: "succeeded", payment_method_id: paid.payment_method_id });
  });

  /** A synchronous terminal's automatic payment, allow_saving_card, blocking until `card` is presented: the merchant, the intent and the blocking answer. */
  async function paidOnSyncTerminal(account: string, amount: string, external_customer_id: string, card: Record<string, string>, processor: "A" | "B" = "A") {
    const m = await api.merchant(account, processor);
    const terminal = await m.terminal("A_sync");
    const { body: intent } = await m.post("/v1/payment/intent", { amount, payment_method_types: "card_present", capture_method: "automatic", external_customer_id, allow_saving_card: true });
    const blocking = m.post("/v1/payment/auth", { payment_id: intent.payment_id, terminal_id: terminal });
    await untilCollecting(terminal);
    await m.post("/sim/terminal/present-card", { terminal_id: terminal, ...card });
    return { m, intent, paid: expectShape(PaymentRecordOut("v1"), (await blocking).body) };
  }

  it("a card expiring before 03/30 is paid but not saved", async () => {
    const { paid } = await paidOnSyncTerminal("acct_sync2", "3.00", "cus_x", { card_number: "4000000000000077" });
    expect(paid).toMatchObject({ status: "success", payment_method_id: null });
  });

  it("the blocking answer carries the auth request's own request_id, not the terminal report's", async () => {
    const m = await api.merchant("acct_sync_rid");
    const terminal = await m.terminal("A_sync");
    const { body: intent } = await m.post("/v1/payment/intent", { amount: "2.00", payment_method_types: "card_present", capture_method: "automatic" });
    const blocking = m.post("/v1/payment/auth", { payment_id: intent.payment_id, terminal_id: terminal });
    await untilCollecting(terminal);
    const presented = await m.post("/sim/terminal/present-card", { terminal_id: terminal });
    const answer = await blocking;
    expect(answer.body.status).toBe("success");
    expect(answer.body.request_id).toBe(Number(answer.headers.get("request-id")));
    expect(answer.body.request_id).not.toBe(Number(presented.headers.get("request-id")));
  });

  it("a capture the processor settles later: the token and the captured amount are in the blocking answer (spec §3, §4.4), and the card is saved once", async () => {
    const { m, intent, paid } = await paidOnSyncTerminal("acct_sync3", "70.00", "cus_7", { card_number: "4242424242424242", capture: "requested" });
    expect(paid).toMatchObject({ status: "capture_requested", amount_captured: "70.00", amount_capturable: "0.00", amount_refundable: "70.00", payment_method_id: expect.stringMatching(/^pm_/) });
    await api.clock.advance(1_000); // the processor settles
    expect((await m.read(intent.payment_id)).body).toMatchObject({ status: "succeeded", amount_captured: "70.00", payment_method_id: paid.payment_method_id });
    const cards = await m.get(`/v1/customer/card?external_account_id=acct_sync3&external_customer_id=cus_7`);
    expect(cards.body.data).toEqual([expect.objectContaining({ payment_method_id: paid.payment_method_id })]);
  });
  it("a card saved on a processor A terminal of a processor B account is charged through processor A, which holds its token", async () => {
    const { m, paid } = await paidOnSyncTerminal("acct_sync_b", "4.00", "cus_ab", { card_number: "4242424242424242" }, "B");
    expect(paid).toMatchObject({ status: "success", processor: "A", payment_method_id: expect.stringMatching(/^pm_/) });
    const { body: charge } = await m.post("/v1/payment/intent", { amount: "9.00", payment_method_types: "card", capture_method: "manual", payment_method_id: paid.payment_method_id, external_customer_id: "cus_ab" });
    expect((await m.read(charge.payment_id)).body.processor).toBe("A");
    expect((await m.post("/v1/payment/auth", { payment_id: charge.payment_id })).body).toMatchObject({ status: "requires_capture", processor: "A", amount_authorized: "9.00" });
    // a sandbox test token is no processor's in particular: the account's
    const { body: test } = await m.post("/v1/payment/intent", { amount: "1.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_ab" });
    expect((await m.read(test.payment_id)).body.processor).toBe("B");
  });
});

describe("stored-card charge", () => {
  it("manual: create (requires_payment_method), auth (requires_capture, nothing captured), capture", async () => {
    const m = await api.merchant("acct_cof");
    const created = await m.post("/v1/payment/intent", { amount: "19.99", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
    const intent = expectShape(CreatedIntentOut("v1"), created.body);
    expect(intent.status).toBe("requires_payment_method");
    expect(intent.client_secret).toBeUndefined();

    const auth = await m.post("/v1/payment/auth", { payment_id: intent.payment_id });
    const authorized = expectShape(PaymentRecordOut("v1"), auth.body);
    expect(authorized).toMatchObject({
      status: "requires_capture",
      amount_authorized: "19.99",
      amount_captured: "0.00",
      amount_capturable: "19.99",
      card_present: false,
      payment_method_id: "pm_card_visa",
      payment: { type: "card_not_present", brand: "visa", last_4: "4242", payment_method_id: "pm_card_visa" },
    });

    const captured = await m.post("/v1/payment/capture", { payment_id: intent.payment_id, amount: 19.99 });
    expect(expectShape(PaymentRecordOut("v1"), captured.body)).toMatchObject({ status: "success", amount_captured: "19.99", amount_refundable: "19.99" });
    // the same payment read through /v2 says succeeded
    expect((await m.read(intent.payment_id)).body.status).toBe("succeeded");
  });

  it("the caller's reference given with the authorization (spec §4.4 external_payment_id) comes back as external_transaction_id, and the list finds the payment by it", async () => {
    const m = await api.merchant("acct_ref");
    const created = await m.post("/v2/payment/intent", { amount: "5.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1", external_payment_id: "order-1" });
    const id = created.body.payment_id;
    expect(created.body.external_transaction_id).toBe("order-1");
    // a refused authorization (bad terminal_id) records nothing
    expect((await m.post("/v2/payment/auth", { payment_id: id, terminal_id: "tmr_x", external_payment_id: "pos-1" })).status).toBe(400);
    expect((await m.read(id)).body.external_transaction_id).toBe("order-1");
    const auth = await m.post("/v2/payment/auth", { payment_id: id, external_payment_id: "pos-2" });
    expect(auth.body).toMatchObject({ status: "requires_capture", external_transaction_id: "pos-2" });
    expect((await m.read(id)).body.external_transaction_id).toBe("pos-2");
    const found = await m.get("/v2/payments?external_account_id=acct_ref&q=pos-2");
    expect(found.body.data.map((p: { payment_id: string }) => p.payment_id)).toEqual([id]);
    expect((await m.get("/v2/payments?external_account_id=acct_ref&q=order-1")).body.data).toEqual([]);
  });

  it("automatic: success at once, or capture_requested while the capture settles; a declined card gives error", async () => {
    const m = await api.merchant("acct_cof2");
    const { body: a } = await m.post("/v1/payment/intent", { amount: "1.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_mastercard", external_customer_id: "c" });
    expect((await m.post("/v1/payment/auth", { payment_id: a.payment_id })).body).toMatchObject({ status: "success", amount_captured: "1.00" });

    const { body: d } = await m.post("/v1/payment/intent", { amount: "1.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_declined", external_customer_id: "c" });
    const declined = await m.post("/v1/payment/auth", { payment_id: d.payment_id });
    expect(expectShape(PaymentRecordOut("v1"), declined.body)).toMatchObject({ status: "error", last_error: "Your card was declined" });
  });

  it("capture_requested then success when captures settle later", async () => {
    await api.close();
    api = await startApi({ captures: "requested", captureSettleMs: 2_000 });
    const m = await api.merchant("acct_settle");
    const { body: a } = await m.post("/v1/payment/intent", { amount: "8.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "c" });
    const auth = await m.post("/v1/payment/auth", { payment_id: a.payment_id });
    expect(expectShape(PaymentRecordOut("v1"), auth.body)).toMatchObject({ status: "capture_requested", amount_captured: "8.00", amount_refundable: "8.00", amount_capturable: "0.00" });
    await api.clock.advance(2_000);
    expect((await m.read(a.payment_id)).body).toMatchObject({ status: "succeeded", amount_captured: "8.00" });
  });
});

describe("processor B (client reader SDK)", () => {
  async function collect(clientSecret: string, extra: Record<string, unknown> = {}) {
    const res = await api.request("POST", "/v2/sdk/payment-method", { body: { client_secret: clientSecret, ...extra } });
    expect(res.status).toBe(200);
    return expectShape(ClientIntentOut, res.body);
  }

  it("card present, customer on the intent, manual capture: collect, process, capture, save card", async () => {
    const m = await api.merchant("acct_b1", "B");
    const reader = await m.terminal("B_reader");
    const { body: intent } = await m.post("/v2/payment/intent", { amount: "30.00", payment_method_types: "card_present", capture_method: "manual", external_customer_id: "cus_b1" });
    expect(expectShape(CreatedIntentOut("v2"), intent).client_secret).toMatch(new RegExp(`^${intent.payment_id}_secret_`));

    expect(await collect(intent.client_secret, { terminal_id: reader, card_number: "378282246310005" })).toMatchObject({ status: "payment_method_requested", payment: { brand: "amex", last_4: "0005" } });
    const processed = await m.post("/v2/payment/auth", { payment_id: intent.payment_id });
    expect(expectShape(PaymentRecordOut("v2"), processed.body)).toMatchObject({ status: "requires_capture", processor: "B", terminal_id: reader });
    expect((await m.post("/v2/payment/capture", { payment_id: intent.payment_id, amount: 30 })).body.status).toBe("succeeded");

    const saved = await m.post("/v1/customer/card", { payment_id: intent.payment_id, external_customer_id: "cus_b1" });
    expect(saved.status).toBe(200);
    const card = expectShape(CustomerCardOut, saved.body);
    expect(card).toMatchObject({ external_account_id: "acct_b1", external_customer_id: "cus_b1", brand: "amex", last_4: "0005", exp_month: "12", exp_year: 2030, payment_id: intent.payment_id });
    expect(card.payment_method_id).toMatch(/^pm_/);
  });

  it("card not present, manual, allow_saving_card, as the spec writes it: create, collect, save the card, capture later", async () => {
    const m = await api.merchant("acct_b2", "B");
    // 1. create intent with card, manual, allow_saving_card true
    const { body: intent } = await m.post("/v2/payment/intent", { amount: "12.00", payment_method_types: "card", capture_method: "manual", allow_saving_card: true });
    expect(intent.client_secret).toBeDefined();
    // 2. collect the payment method in the client SDK: a card form's collect also processes it
    expect(await collect(intent.client_secret)).toMatchObject({ status: "requires_capture", amount: "12.00", payment: { type: "card_not_present", last_4: "4242" } });
    // 3. call the customer card endpoint, with no other step in between
    const saved = await m.post("/v1/customer/card", { payment_id: intent.payment_id, external_customer_id: "cus_b2" });
    expect(saved.status).toBe(200);
    expect(expectShape(CustomerCardOut, saved.body)).toMatchObject({ external_customer_id: "cus_b2", last_4: "4242", payment_id: intent.payment_id });
    expect((await m.read(intent.payment_id)).body).toMatchObject({ status: "requires_capture", amount_authorized: "12.00", payment_method_id: saved.body.payment_method_id });
    // 4. optionally capture later
    const captured = await m.post("/v1/payment/capture", { payment_id: intent.payment_id, amount: "12.00" });
    expect(expectShape(PaymentRecordOut("v1"), captured.body)).toMatchObject({ status: "success", payment_method_id: saved.body.payment_method_id });
  });

  it("card not present: processing after the collect processed the payment answers it without acting again; a merchant auth is refused, naming why", async () => {
    const m = await api.merchant("acct_b4", "B");
    const { body: intent } = await m.post("/v2/payment/intent", { amount: "5.00", payment_method_types: "card", capture_method: "automatic" });
    expect(await collect(intent.client_secret, { card_number: "5555555555554444" })).toMatchObject({ status: "succeeded", payment: { last_4: "4444" } });
    const before = (await api.store.readStream(`payment-${intent.payment_id}`)).length;
    const again = await api.request("POST", "/v2/sdk/process-payment", { body: { client_secret: intent.client_secret } });
    expect(again).toMatchObject({ status: 200, body: { status: "succeeded" } });
    expect((await api.store.readStream(`payment-${intent.payment_id}`)).length).toBe(before);
    expect(expectProblem(await m.post("/v2/payment/auth", { payment_id: intent.payment_id }), 409, "payment_intent_unexpected_state").detail).toContain("already processed the payment");
    expect((await m.read(intent.payment_id)).body).toMatchObject({ status: "succeeded", amount_captured: "5.00" });
    // a card form's decline: the collect's answer says why, as the status read does
    const { body: declined } = await m.post("/v2/payment/intent", { amount: "5.00", payment_method_types: "card", capture_method: "automatic" });
    expect(await collect(declined.client_secret, { card_number: "4000000000000002" })).toMatchObject({ status: "error", last_error: "Your card was declined" });
    expect(await collect(declined.client_secret, { card_number: "4000000000000143" })).toMatchObject({ status: "error", last_error: "The processor declined the card", last_error_code: "ONLINE_DECLINED" });
  });

  it("card not present: a collect retried with its Idempotency-Key answers the first answer and authorizes once", async () => {
    const m = await api.merchant("acct_b5", "B");
    const { body: intent } = await m.post("/v2/payment/intent", { amount: "7.00", payment_method_types: "card", capture_method: "automatic" });
    const send = () => api.request("POST", "/v2/sdk/payment-method", { body: { client_secret: intent.client_secret }, headers: { "idempotency-key": "collect-1" } });
    const first = await send();
    expect(expectShape(ClientIntentOut, first.body)).toMatchObject({ status: "succeeded" });
    const again = await send();
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const attempts = (await api.store.readAll()).filter((e) => e.stream === `payment-${intent.payment_id}` && e.type === "AuthorizationAttempted");
    expect(attempts).toHaveLength(1);
  });

  it("card present, automatic capture, customer attached after the capture", async () => {
    const m = await api.merchant("acct_b3", "B");
    const reader = await m.terminal("B_reader");
    const { body: intent } = await m.post("/v2/payment/intent", { amount: "9.00", payment_method_types: "card_present", capture_method: "automatic", allow_saving_card: true });
    await collect(intent.client_secret, { terminal_id: reader });
    // the SDK processes the payment itself, with the client secret
    const processed = await api.request("POST", "/v2/sdk/process-payment", { body: { client_secret: intent.client_secret } });
    expect(expectShape(ClientIntentOut, processed.body)).toMatchObject({ status: "succeeded" });
    expect((await m.read(intent.payment_id)).body).toMatchObject({ status: "succeeded", amount_captured: "9.00", external_customer_id: null });
    const saved = await m.post("/v1/customer/card", { payment_id: intent.payment_id, external_customer_id: "cus_late" });
    expect(expectShape(CustomerCardOut, saved.body).external_customer_id).toBe("cus_late");
    expect((await m.read(intent.payment_id)).body).toMatchObject({ external_customer_id: "cus_late", payment_method_id: saved.body.payment_method_id });
  });
});

describe("terminals and extensions", () => {
  it("registers and lists the account's terminals", async () => {
    const m = await api.merchant("acct_hw");
    const res = await m.post("/v2/hardware", { terminal_type: "A_sync", label: "Front desk", serial_number: "SN-1" });
    const terminal = expectShape(TerminalOut, res.body);
    expect(terminal).toEqual({ terminal_id: expect.stringMatching(/^tmr_/), external_account_id: "acct_hw", terminal_type: "A_sync", label: "Front desk", serial_number: "SN-1", date_created: T0 });
    await m.terminal("B_reader");
    const list = expectShape(TerminalListOut, (await m.get("/v2/hardware?external_account_id=acct_hw")).body);
    expect(list.data.map((t) => t.terminal_type).sort()).toEqual(["A_sync", "B_reader"]);
  });

  it("cancel before capture and partial refunds after (/v1 and /v2)", async () => {
    const m = await api.merchant("acct_ext");
    const { body: a } = await m.post("/v1/payment/intent", { amount: "50.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c" });
    await m.post("/v1/payment/auth", { payment_id: a.payment_id });
    const canceled = await m.post("/v2/payment/cancel", { payment_id: a.payment_id, cancellation_reason: "requested_by_customer" });
    expect(expectShape(PaymentRecordOut("v2"), canceled.body).status).toBe("canceled");

    const { body: b } = await m.post("/v1/payment/intent", { amount: "50.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "c" });
    await m.post("/v1/payment/auth", { payment_id: b.payment_id });
    const partial = await m.post("/v1/payment/refund", { payment_id: b.payment_id, amount: "20.00" });
    expect(expectShape(PaymentRecordOut("v1"), partial.body)).toMatchObject({ status: "success", amount_refunded: "20.00", amount_refundable: "30.00" });
    const rest = await m.post("/v2/payment/refund", { payment_id: b.payment_id });
    expect(rest.body).toMatchObject({ status: "succeeded", amount_refunded: "50.00", amount_refundable: "0.00" });
  });

  it("serves /healthz and an OpenAPI document listing every endpoint", async () => {
    expect((await api.request("GET", "/healthz")).body).toEqual({ status: "ok" });
    const doc = (await api.request("GET", "/openapi.json")).body;
    expect(doc.openapi).toBe("3.1.0");
    for (const path of ["/v1/payment/intent", "/v2/payment/intent", "/v1/payment/auth", "/v2/payment/auth", "/v2/payment/intent/{payment_id}", "/v1/payment/capture", "/v2/payment/capture", "/v1/customer/card", "/v2/hardware", "/v2/sdk/payment-method", "/sim/terminal/present-card"]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(doc.paths["/v2/payment/intent"].post.requestBody.content["application/json"].schema.properties.amount).toBeDefined();
    expect(doc.paths["/v2/payment/refund"].post.tags).toEqual(["extensions"]);
  });
});

describe("the routes no flow above reads", () => {
  // with every other HTTP test, the harness has now checked a live answer of every route against its schema
  it("the account, readiness and the /v1 cancel answer", async () => {
    const m = await api.merchant("acct_rest");
    const account = await m.get("/v2/account");
    expect(account.status).toBe(200);
    expect(account.body).toMatchObject({ external_account_id: "acct_rest" });
    // external_account_id "in every call" (spec §1): its own is the same answer, another's 403
    expect((await m.get("/v2/account?external_account_id=acct_rest")).body).toEqual(account.body);
    expect((await m.get("/v2/account?external_account_id=acct_other")).status).toBe(403);
    expect((await api.request("GET", "/readyz")).body).toEqual({ status: "ok" });
    const { body: a } = await m.post("/v1/payment/intent", { amount: "5.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c" });
    await m.post("/v1/payment/auth", { payment_id: a.payment_id });
    const canceled = await m.post("/v1/payment/cancel", { payment_id: a.payment_id });
    expect(expectShape(PaymentRecordOut("v1"), canceled.body).status).toBe("canceled");
  });
});
