// Spec §4.8 "Stored-card charge": create with payment_method_id + external_customer_id
// (requires_payment_method), auth without a terminal, capture when manual (§3, §4.4).
import { describe, expect, test } from "vitest";
import { A, B, failureOf, refused, rig } from "./harness.js";

const storedCard = { payment_method_types: "card" as const, payment_method_id: "pm_card_visa", external_customer_id: "cus_1" };

describe("stored-card charge (card not present)", () => {
  test("manual capture: requires_payment_method, auth -> requires_capture with amount_captured 0, capture -> succeeded", async () => {
    const { engine, intent } = await rig();
    const created = await intent(A, { ...storedCard, capture_method: "manual", amount: "12.50" });
    expect(created).toMatchObject({ status: "requires_payment_method", card_present: false, payment_method_id: "pm_card_visa" });

    const auth = await engine.authorize({ external_account_id: A, payment_id: created.payment_id });
    expect(auth).toMatchObject({ status: "requires_capture", amount_authorized: "12.50", amount_captured: "0.00", amount_capturable: "12.50" });
    expect(auth.payment).toMatchObject({ type: "card_not_present", brand: "visa", last_4: "4242", payment_method_id: "pm_card_visa" });
    expect(auth.authorization_code).toEqual(expect.any(String));

    const captured = await engine.capture({ external_account_id: A, payment_id: created.payment_id, amount: 12.5 });
    expect(captured).toMatchObject({ status: "succeeded", amount_captured: "12.50", amount_refundable: "12.50" });
  });

  test("automatic capture: the auth answers success (succeeded) on both processors", async () => {
    const { engine, intent } = await rig();
    for (const account of [A, B]) {
      const { payment_id } = await intent(account, { ...storedCard, capture_method: "automatic" });
      const auth = await engine.authorize({ external_account_id: account, payment_id });
      expect(auth).toMatchObject({ status: "succeeded", amount_captured: "10.00", processor: account === A ? "A" : "B" });
    }
  });

  test("automatic capture with the capture-requested test amount: capture_requested, settling after the default short delay", async () => {
    const { engine, intent, get, clock } = await rig();
    const { payment_id } = await intent(A, { ...storedCard, capture_method: "automatic", amount: "99.13" });
    const auth = await engine.authorize({ external_account_id: A, payment_id });
    expect(auth).toMatchObject({ status: "capture_requested", amount_authorized: "99.13", amount_captured: "99.13" });
    await clock.advance(999);
    expect((await get(A, payment_id)).status).toBe("capture_requested");
    await clock.advance(1);
    expect(await get(A, payment_id)).toMatchObject({ status: "succeeded", amount_captured: "99.13" });
  });

  test("captures requested processor-wide: a manual capture answers capture_requested and settles after the configured delay", async () => {
    const { engine, intent, get, clock } = await rig({ simulators: { captures: "requested", captureSettleMs: 10_000 } });
    const { payment_id } = await intent(A, { ...storedCard, capture_method: "manual" });
    await engine.authorize({ external_account_id: A, payment_id });
    const capture = await engine.capture({ external_account_id: A, payment_id, amount: "6.00" });
    // spec §3: the captured amount is in the record while the capture settles
    expect(capture).toMatchObject({ status: "capture_requested", amount_captured: "6.00", amount_capturable: "0.00", amount_refundable: "6.00" });
    // a refund waits for the settlement, and the refusal says so
    expect(await refused(engine.refund({ external_account_id: A, payment_id, amount: "1.00" }))).toMatchObject({
      status: 409,
      message: `payment ${payment_id} in status capture_requested does not allow refund (the capture is requested and not settled yet: it can be refunded once the payment is succeeded); allowed next steps: none`,
    });
    await clock.advance(9_999);
    expect((await get(A, payment_id)).status).toBe("capture_requested");
    await clock.advance(1);
    expect(await get(A, payment_id)).toMatchObject({ status: "succeeded", amount_captured: "6.00", amount_refundable: "6.00" });
  });

  test("a declined stored card ends in error with last_error (any status but capture_requested/success signals an error)", async () => {
    const { engine, intent } = await rig();
    const { payment_id } = await intent(A, { ...storedCard, payment_method_id: "pm_card_declined", capture_method: "automatic" });
    const auth = await engine.authorize({ external_account_id: A, payment_id });
    expect(failureOf(auth)).toEqual({ status: "error", last_error: "Your card was declined", last_error_code: undefined });
  });

  test("terminal_id is not sent for a stored-card charge; an unknown card on file is refused at create", async () => {
    const { engine, intent, terminal } = await rig();
    const terminal_id = await terminal("A_sync");
    const { payment_id } = await intent(A, { ...storedCard, capture_method: "manual" });
    expect(await refused(engine.authorize({ external_account_id: A, payment_id, terminal_id }))).toMatchObject({ status: 400, param: "terminal_id" });
    expect(await refused(intent(A, { ...storedCard, payment_method_id: "pm_nope", capture_method: "manual" }))).toMatchObject({ status: 404, param: "payment_method_id" });
  });
});

test("retry after error with the same card on file: the card that declines once is approved on the second auth", async () => {
  const { engine, intent } = await rig();
  const { payment_id } = await intent(A, { ...storedCard, payment_method_id: "pm_card_declined_once", capture_method: "manual" });
  expect(failureOf(await engine.authorize({ external_account_id: A, payment_id }))).toEqual({ status: "error", last_error: "Your card was declined", last_error_code: undefined });
  const retried = await engine.authorize({ external_account_id: A, payment_id });
  expect(retried).toMatchObject({ status: "requires_capture", amount_authorized: "10.00" });
  expect(retried.last_error).toBeUndefined();
});

test("retry after requires_payment_method (a timeout) on a stored card is allowed; the test amount decides again", async () => {
  const { engine, intent } = await rig();
  const { payment_id } = await intent(A, { ...storedCard, capture_method: "automatic", amount: "99.09" });
  expect(failureOf(await engine.authorize({ external_account_id: A, payment_id }))).toMatchObject({ status: "requires_payment_method", last_error_code: "USER_TIMEOUT" });
  expect(failureOf(await engine.authorize({ external_account_id: A, payment_id }))).toMatchObject({ status: "requires_payment_method", last_error_code: "USER_TIMEOUT" });
});
