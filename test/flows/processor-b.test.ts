// Spec §4.8, the three processor B save-card flows: the client reader SDK collects the card with the
// intent's client secret; a reader's payment is then processed, a card form's collect processes it
// itself (card not present: collect, then save, as the spec writes it); the card is saved through §4.7.
import { describe, expect, test } from "vitest";
import { createReaderSdk, engineTransport, type ReaderCall } from "../../src/client-sdk.js";
import { B, A, failureOf, refused, rig } from "./harness.js";

describe("processor B, client reader SDK", () => {
  test("save card, card present, customer on the intent, manual capture: collect, process, capture, then save", async () => {
    const { engine, sdk, terminal, intent, get } = await rig();
    const reader = await terminal("B_reader");
    const created = await intent(B, { capture_method: "manual", external_customer_id: "cus_b1" });
    expect(created.client_secret).toMatch(new RegExp(`^${created.payment_id}_secret_`));

    const collected = await sdk.collectPaymentMethod(created.client_secret!, { terminal_id: reader, card_number: "5555555555554444" });
    expect(collected).toMatchObject({ status: "payment_method_requested", processor: "B", terminal_id: reader });
    const processed = await sdk.processPayment(created.client_secret!);
    expect(processed).toMatchObject({ status: "requires_capture", amount_authorized: "10.00", amount_captured: "0.00" });

    // a card-present card authorized manually is captured before it is saved (spec §4.6)
    const early = await refused(engine.saveCard({ external_account_id: B, payment_id: created.payment_id, external_customer_id: "cus_b1" }));
    expect(early).toMatchObject({ status: 409 });

    await engine.capture({ external_account_id: B, payment_id: created.payment_id, amount: "10.00" });
    const saved = await engine.saveCard({ external_account_id: B, payment_id: created.payment_id, external_customer_id: "cus_b1" });
    expect(saved).toMatchObject({ external_customer_id: "cus_b1", brand: "mastercard", last_4: "4444" });
    expect(await get(B, created.payment_id)).toMatchObject({ status: "succeeded", payment_method_id: saved.payment_method_id });
  });

  test("save card, card not present, manual capture, as the spec writes it: create, collect, save, capture later, charge again", async () => {
    const { engine, sdk, intent, get } = await rig();
    const created = await intent(B, { payment_method_types: "card", capture_method: "manual", allow_saving_card: true, amount: "30.00" });
    expect(created.client_secret).not.toBeNull();
    // the card form's collect authorizes the card: the next step the spec names (save) works at once
    const collected = await sdk.collectPaymentMethod(created.client_secret!);
    expect(collected).toMatchObject({ status: "requires_capture", amount_authorized: "30.00", amount_captured: "0.00", payment: { type: "card_not_present" } });

    const saved = await engine.saveCard({ external_account_id: B, payment_id: created.payment_id, external_customer_id: "cus_b2" });
    expect(await get(B, created.payment_id)).toMatchObject({ status: "requires_capture", payment_method_id: saved.payment_method_id, external_customer_id: "cus_b2" });

    const captured = await engine.capture({ external_account_id: B, payment_id: created.payment_id, amount: "30.00" });
    expect(captured).toMatchObject({ status: "succeeded", amount_captured: "30.00", payment_method_id: saved.payment_method_id });

    const charge = await intent(B, { payment_method_types: "card", capture_method: "automatic", payment_method_id: saved.payment_method_id, external_customer_id: "cus_b2" });
    expect((await engine.authorize({ external_account_id: B, payment_id: charge.payment_id })).status).toBe("succeeded");
  });

  test("card not present: the collect's processing is one attempt with its outcome; processing again answers the payment and acts no second time", async () => {
    const { engine, sdk, intent } = await rig();
    const created = await intent(B, { payment_method_types: "card", capture_method: "automatic" });
    expect(await sdk.collectPaymentMethod(created.client_secret!)).toMatchObject({ status: "succeeded", amount_captured: "10.00" });
    const types = (await engine.store.readStream(`payment-${created.payment_id}`)).map((e) => e.type);
    expect(types).toEqual(["PaymentIntentCreated", "PaymentMethodCollected", "AuthorizationAttempted", "PaymentAuthorized", "CaptureAttempted", "PaymentCaptured"]);
    expect(await sdk.processPayment(created.client_secret!)).toMatchObject({ status: "succeeded", amount_captured: "10.00" });
    expect(await refused(sdk.collectPaymentMethod(created.client_secret!))).toMatchObject({ status: 409 });
    expect((await engine.store.readStream(`payment-${created.payment_id}`)).length).toBe(types.length);
  });

  test("card not present: a declined card form ends in error; collecting another card processes it again", async () => {
    const { sdk, intent } = await rig();
    const created = await intent(B, { payment_method_types: "card", capture_method: "manual" });
    expect(failureOf(await sdk.collectPaymentMethod(created.client_secret!, { card_number: "4000000000000002" }))).toMatchObject({ status: "error" });
    expect(await sdk.collectPaymentMethod(created.client_secret!)).toMatchObject({ status: "requires_capture", amount_authorized: "10.00" });
  });

  test("card not present: when the collect's processing never reached the processor, process-payment authorizes the collected card", async () => {
    let crashes = 1;
    const { engine, sdk, intent } = await rig({
      engine: {
        fault: (point) => {
          if (point === "after_attempt" && crashes-- > 0) throw new Error("crash after the attempt");
        },
      },
    });
    const created = await intent(B, { payment_method_types: "card", capture_method: "manual", allow_saving_card: true });
    await expect(sdk.collectPaymentMethod(created.client_secret!)).rejects.toThrow("crash after the attempt");
    const report = await engine.reconcile({ graceMs: 0 });
    expect(report.resolved.map((r) => [r.open, r.processor, r.appended.join()])).toEqual([["AuthorizationAttempted", "never_received", "AttemptAbandoned"]]);
    // the card is collected, not processed: collecting again is refused, processing is the retry
    expect(await refused(sdk.collectPaymentMethod(created.client_secret!))).toMatchObject({ status: 409 });
    expect(await sdk.processPayment(created.client_secret!)).toMatchObject({ status: "requires_capture", amount_authorized: "10.00" });
    expect(await engine.saveCard({ external_account_id: B, payment_id: created.payment_id, external_customer_id: "cus_b5" })).toMatchObject({ external_customer_id: "cus_b5" });
  });

  test("save card, card present, automatic capture, customer attached after the capture", async () => {
    const { engine, sdk, terminal, intent } = await rig();
    const reader = await terminal("B_reader");
    const created = await intent(B, { capture_method: "automatic", allow_saving_card: true });
    // spec §4.8: collect in the client SDK, then (once captured) save: with automatic capture the collect processes
    expect(await sdk.collectPaymentMethod(created.client_secret!, { terminal_id: reader })).toMatchObject({ status: "succeeded", amount_captured: "10.00", external_customer_id: null });
    // an SDK that processes after every collect gets the same payment
    expect(await sdk.processPayment(created.client_secret!)).toMatchObject({ status: "succeeded", amount_captured: "10.00" });

    const saved = await engine.saveCard({ external_account_id: B, payment_id: created.payment_id, external_customer_id: "cus_b3" });
    expect(await engine.listCustomerCards(B, "cus_b3")).toEqual([saved]);
    // saving again for the same customer answers with the same card
    expect(await engine.saveCard({ external_account_id: B, payment_id: created.payment_id, external_customer_id: "cus_b3" })).toEqual(saved);
  });

  test("a card expiring before 03/30 cannot be saved from the SDK flows either", async () => {
    const { engine, sdk, intent } = await rig();
    const created = await intent(B, { payment_method_types: "card", capture_method: "manual", allow_saving_card: true });
    expect((await sdk.collectPaymentMethod(created.client_secret!, { card_number: "4000000000000077" })).status).toBe("requires_capture");
    expect(await refused(engine.saveCard({ external_account_id: B, payment_id: created.payment_id, external_customer_id: "cus_b4" }))).toMatchObject({ status: 402, code: "card_not_savable" });
  });

  test("a decline through the SDK ends in error; collecting another card and processing again succeeds", async () => {
    const { sdk, terminal, intent } = await rig();
    const reader = await terminal("B_reader");
    const created = await intent(B, { capture_method: "automatic" });
    await sdk.collectPaymentMethod(created.client_secret!, { terminal_id: reader, card_number: "4000000000000143" });
    expect(failureOf(await sdk.processPayment(created.client_secret!))).toEqual({ status: "error", last_error: "The processor declined the card", last_error_code: "ONLINE_DECLINED" });
    await sdk.collectPaymentMethod(created.client_secret!, { terminal_id: reader, card_number: "4242424242424242" });
    const retried = await sdk.processPayment(created.client_secret!);
    expect(retried).toMatchObject({ status: "succeeded" });
    expect(retried.last_error).toBeUndefined();
  });

  test("the SDK refuses clearly: processing before collecting, a wrong client secret, a terminal that is not a B reader", async () => {
    const { sdk, terminal, intent, engine } = await rig();
    const created = await intent(B, { capture_method: "manual" });
    const early = await refused(sdk.processPayment(created.client_secret!));
    expect(early).toMatchObject({ status: 409 });
    expect(early.message).toContain("after collecting its payment method");
    expect(await refused(sdk.collectPaymentMethod(`${created.payment_id}_secret_wrong`))).toMatchObject({ status: 401, code: "unauthorized", param: "client_secret" });
    expect(await refused(sdk.processPayment("no-secret-here"))).toMatchObject({ status: 401, code: "unauthorized", param: "client_secret" });
    const aTerminal = await terminal("A_async", B);
    expect(await refused(sdk.collectPaymentMethod(created.client_secret!, { terminal_id: aTerminal }))).toMatchObject({ status: 400, param: "terminal_id" });
    // and a B reader is not driven by the auth call
    const reader = await terminal("B_reader");
    expect(await refused(engine.authorize({ external_account_id: B, payment_id: created.payment_id, terminal_id: reader }))).toMatchObject({ code: "terminal_collects_with_client_sdk" });
  });

  test("only intents the SDK may collect get a client secret", async () => {
    const { intent } = await rig();
    expect((await intent(A, { payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c" })).client_secret).toBeNull();
    expect((await intent(A, { payment_method_types: "card", capture_method: "manual" })).client_secret).toBeNull();
    expect((await intent(B, { payment_method_types: "card", capture_method: "manual" })).client_secret).not.toBeNull();
  });

  test("the SDK works through a transport function (as it would over HTTP)", async () => {
    const { engine, intent, terminal } = await rig();
    const calls: ReaderCall["operation"][] = [];
    const toEngine = engineTransport(engine);
    const sdk = createReaderSdk(async (call) => {
      calls.push(call.operation);
      return toEngine(JSON.parse(JSON.stringify(call)) as ReaderCall);
    });
    const reader = await terminal("B_reader");
    const created = await intent(B, { capture_method: "automatic" });
    await sdk.collectPaymentMethod(created.client_secret!, { terminal_id: reader, card_number: "378282246310005" });
    const record = await sdk.processPayment(created.client_secret!);
    expect(record).toMatchObject({ status: "succeeded" });
    expect(record.payment).toMatchObject({ brand: "amex", last_4: "0005" });
    expect(calls).toEqual(["collect_payment_method", "process_payment"]);
  });
});
