// The payment machine's guards, tried on the machine itself (applyPaymentEvent, machines/fold.ts).
// The engine refuses most bad commands before the machine sees them (src/engine/allowed.ts, input
// checks), so engine-level tests never offer the machine what each guard exists to refuse; these
// do. Expected outcomes come from the spec (§2.3, §3, §4.6–§4.8) and the attempt rules of
// machines/payment.ts's header: each guard refuses its case, and the case next to it is accepted.
import { describe, expect, test } from "vitest";
import type { Authorization, Card, PaymentEvent, PaymentEventOf } from "../../machines/events.js";
import { applyPaymentEvent, initialPaymentSnapshot, snapshotOf, type PaymentSnapshot } from "../../machines/fold.js";
import { initialPaymentContext } from "../../machines/payment.js";
import { created as intentCreated } from "../engine/deciders/events.js";
import { TEST_CARD } from "../support/scripted-processor.js";

type Intent = PaymentEventOf<"PaymentIntentCreated">["data"];
const CARD_NOT_PRESENT: Card = { ...TEST_CARD, type: "card_not_present" };

// the deciders' specs' intent, on processor B and allowing a saved card unless told otherwise
const created = (overrides: Partial<Intent> = {}): PaymentEvent => intentCreated({ processor: "B", allow_saving_card: true, ...overrides });

const storedCard = (capture_method: "manual" | "automatic", amount = "10.00") =>
  created({ processor: "A", payment_method_id: "pm_1", stored_card: CARD_NOT_PRESENT, external_customer_id: "cus_1", capture_method, amount });

function authorization(amount_authorized: string, tip_amount = "0.00", donation_amount = "0.00"): Authorization {
  return { amount_authorized, tip_amount, donation_amount, authorization_code: "A1", card: CARD_NOT_PRESENT, avs_response_code: null, avs_response_message: null };
}

// one constructor per event type used, so a test names only what it is about
const ev = {
  collected: (terminal_id: string | null, card = CARD_NOT_PRESENT): PaymentEvent => ({ type: "PaymentMethodCollected", version: 1, data: { card, terminal_id } }),
  terminalAttempted: (attempt_id: string, terminal_type: "A_async" | "A_sync" | "B_reader"): PaymentEvent => ({
    type: "TerminalAuthorizationAttempted", version: 1, data: { attempt_id, terminal_id: "tml_1", terminal_type },
  }),
  terminalStarted: (terminal_type: "A_async" | "A_sync" | "B_reader", attempt_id?: string): PaymentEvent => ({
    type: "TerminalAuthorizationStarted", version: 1, data: { terminal_id: "tml_1", terminal_type, attempt_id },
  }),
  authAttempted: (attempt_id: string, amount = "10.00"): PaymentEvent => ({ type: "AuthorizationAttempted", version: 1, data: { attempt_id, amount } }),
  authorized: (a: Authorization, attempt_id?: string): PaymentEvent => ({ type: "PaymentAuthorized", version: 1, data: { ...a, attempt_id } }),
  failed: (last_error_code: PaymentEventOf<"AuthorizationFailed">["data"]["last_error_code"], attempt_id?: string): PaymentEvent => ({
    type: "AuthorizationFailed", version: 1, data: { last_error: "failed", last_error_code, attempt_id },
  }),
  captureAttempted: (attempt_id: string, amount: string): PaymentEvent => ({ type: "CaptureAttempted", version: 1, data: { attempt_id, amount } }),
  captureRequested: (amount: string, a: Authorization | null = null, attempt_id?: string): PaymentEvent => ({
    type: "CaptureRequested", version: 1, data: { amount, authorization: a, attempt_id },
  }),
  captured: (amount: string, a: Authorization | null = null, attempt_id?: string): PaymentEvent => ({
    type: "PaymentCaptured", version: 1, data: { amount, authorization: a, attempt_id },
  }),
  voidAttempted: (attempt_id: string): PaymentEvent => ({ type: "VoidAttempted", version: 1, data: { attempt_id, cancellation_reason: null } }),
  canceled: (attempt_id?: string): PaymentEvent => ({ type: "PaymentCanceled", version: 1, data: { cancellation_reason: null, attempt_id } }),
  refundAttempted: (attempt_id: string, amount: string): PaymentEvent => ({ type: "RefundAttempted", version: 1, data: { attempt_id, amount, reason: null } }),
  refunded: (amount: string, attempt_id?: string): PaymentEvent => ({ type: "PaymentRefunded", version: 1, data: { refund_id: `re_${amount}`, amount, reason: null, attempt_id } }),
  saveAttempted: (attempt_id: string, external_customer_id = "cus_1"): PaymentEvent => ({ type: "CardSaveAttempted", version: 1, data: { attempt_id, external_customer_id } }),
  saved: (external_customer_id = "cus_1", attempt_id?: string): PaymentEvent => ({
    type: "CardSaved", version: 1, data: { payment_method_id: "pm_saved", external_account_id: "acct_1", external_customer_id, card: CARD_NOT_PRESENT, attempt_id },
  }),
  abandoned: (attempt_id: string): PaymentEvent => ({ type: "AttemptAbandoned", version: 1, data: { attempt_id, reason: "not sent" } }),
};

/** The payment after these events; each must be allowed (a given that the machine refuses is a broken test). */
function given(...events: PaymentEvent[]): PaymentSnapshot {
  return events.reduce((snapshot, event, i) => {
    const next = applyPaymentEvent(snapshot, event);
    if (!next) throw new Error(`given event ${i} (${event.type}) refused in ${snapshot.value}`);
    return next;
  }, initialPaymentSnapshot);
}

const refuses = (snapshot: PaymentSnapshot, event: PaymentEvent) => expect(applyPaymentEvent(snapshot, event)).toBeNull();
const accepts = (snapshot: PaymentSnapshot, event: PaymentEvent) => {
  const after = applyPaymentEvent(snapshot, event);
  expect(after).not.toBeNull();
  return after!;
};

/** A processor B card-not-present payment whose card the client SDK collected and B authorized (requires_capture). */
const clientSdkAuthorized = (intent: Partial<Intent> = {}) =>
  given(created(intent), ev.collected(null), ev.authAttempted("att_auth"), ev.authorized(authorization("10.00"), "att_auth"));
const storedCardAuthorized = (amount = "10.00") =>
  given(storedCard("manual", amount), ev.authAttempted("att_auth", amount), ev.authorized(authorization(amount), "att_auth"));
const storedCardCaptured = (amount = "10.00") => given(storedCard("automatic", amount), ev.authAttempted("att_auth", amount), ev.captured(amount, authorization(amount), "att_auth"));

describe("a snapshot without an intent", () => {
  test("given a status other than none but no intent in the context, when an event needs the intent, then a clear error names it", () => {
    const corrupt = snapshotOf({ status: "requires_payment_method", context: initialPaymentContext });
    expect(() => applyPaymentEvent(corrupt, ev.authAttempted("att_1"))).toThrow("payment intent not created");
  });
});

describe("who collects the card (spec §1, §4.8)", () => {
  test("given a card-present intent, when a processor B reader is offered as a processor A terminal, then it is refused; A_async and A_sync are accepted", () => {
    const intent = given(created({ payment_method_types: "card_present", processor: "A" }));
    refuses(intent, ev.terminalAttempted("att_1", "B_reader"));
    refuses(intent, ev.terminalStarted("B_reader"));
    for (const type of ["A_async", "A_sync"] as const) {
      expect(accepts(intent, ev.terminalAttempted("att_1", type)).value).toBe("requires_payment_method");
      expect(accepts(intent, ev.terminalStarted(type)).value).toBe("payment_method_requested");
    }
  });

  test("given a card-not-present intent, when a terminal is started, then it is refused (terminals collect card-present payments only)", () => {
    const intent = given(created({ processor: "A" }));
    refuses(intent, ev.terminalAttempted("att_1", "A_async"));
    refuses(intent, ev.terminalStarted("A_async"));
  });

  test("given a processor B card intent, when the client SDK collects from a card form, then the card is recorded with no terminal", () => {
    const after = accepts(given(created()), ev.collected(null));
    expect(after.value).toBe("payment_method_requested");
    expect(after.context).toMatchObject({ card: CARD_NOT_PRESENT, processor: "B", terminal: null });
  });

  test("given a processor B card intent, when the collection names a reader, then it is refused (a card form has no reader)", () => {
    refuses(given(created()), ev.collected("tml_reader"));
  });

  test("given a processor A card intent, when the client SDK collects a card, then it is refused (only processor B has a client SDK)", () => {
    refuses(given(created({ processor: "A" })), ev.collected(null));
  });

  test("given a processor B stored-card intent, when the client SDK collects a card, then it is refused (the card on file is charged)", () => {
    refuses(given(created({ payment_method_id: "pm_1", stored_card: CARD_NOT_PRESENT })), ev.collected(null));
  });

  test("given a card-present intent, when a B reader collects, then the reader is recorded; without a reader it is refused", () => {
    const intent = given(created({ payment_method_types: "card_present", processor: "A" }));
    refuses(intent, ev.collected(null, TEST_CARD));
    const after = accepts(intent, ev.collected("tml_reader", TEST_CARD));
    expect(after.context).toMatchObject({ processor: "B", terminal: { terminal_id: "tml_reader", terminal_type: "B_reader" } });
  });

  test("given a terminal attempt in flight, when a reader reports a collection, then it is refused (one processor call at a time)", () => {
    const inFlight = given(created({ payment_method_types: "card_present", processor: "A" }), ev.terminalAttempted("att_1", "A_async"));
    refuses(inFlight, ev.collected("tml_reader", TEST_CARD));
  });

  test("given a processor A terminal collecting, when an authorization is attempted, then it is refused; after a B collection it is accepted", () => {
    refuses(given(created({ payment_method_types: "card_present", processor: "A" }), ev.terminalStarted("A_async")), ev.authAttempted("att_2"));
    accepts(given(created(), ev.collected(null)), ev.authAttempted("att_2"));
  });

  test("given a B reader's card that timed out and an A terminal now collecting, when an authorization is attempted, then it is refused (the A terminal reports its own outcome)", () => {
    const switched = given(
      created({ payment_method_types: "card_present", processor: "A" }),
      ev.collected("tml_reader", TEST_CARD),
      ev.failed("USER_TIMEOUT"),
      ev.terminalStarted("A_async"),
    );
    expect(switched.value).toBe("payment_method_requested");
    expect(switched.context).toMatchObject({ processor: "A", card: TEST_CARD });
    refuses(switched, ev.authAttempted("att_1"));
  });

  test("given an intent without a stored card, when an authorization is attempted before any card is collected, then it is refused", () => {
    refuses(given(created()), ev.authAttempted("att_1"));
  });
});

describe("authorized and captured in one step (spec §3: collects and captures)", () => {
  test("given a stored-card intent of 10.00 with automatic capture, when the capture carries an authorization of 10.00 for 10.00, then it succeeds", () => {
    const after = accepts(given(storedCard("automatic")), ev.captured("10.00", authorization("10.00")));
    expect(after.value).toBe("succeeded");
    expect(after.context).toMatchObject({ amount_authorized: "10.00", amount_captured: "10.00", amount_capturable: "0.00" });
  });

  test("given a stored-card intent of 10.00 with automatic capture, when the capture amount differs from its authorization, then it is refused", () => {
    const intent = given(storedCard("automatic"));
    refuses(intent, ev.captured("9.00", authorization("10.00")));
    refuses(intent, ev.captureRequested("9.00", authorization("10.00")));
  });

  test("given a stored-card intent with automatic capture, when a capture carries no authorization, then it is refused (nothing was authorized)", () => {
    const intent = given(storedCard("automatic"));
    refuses(intent, ev.captured("10.00", null));
    refuses(intent, ev.captureRequested("10.00", null));
  });

  test("given a stored-card intent of 10.00, when the authorization covers another amount, then it is refused", () => {
    refuses(given(storedCard("automatic")), ev.captured("9.00", authorization("9.00")));
    refuses(given(storedCard("manual")), ev.authorized(authorization("9.00")));
  });

  test("given a terminal collecting for an automatic capture, when it reports a capture whose amount differs from its authorization, then it is refused", () => {
    const collecting = given(created({ payment_method_types: "card_present", processor: "A", capture_method: "automatic" }), ev.terminalStarted("A_sync"));
    refuses(collecting, ev.captured("9.00", authorization("10.00")));
    refuses(collecting, ev.captureRequested("9.00", authorization("10.00")));
    expect(accepts(collecting, ev.captureRequested("10.00", authorization("10.00"))).value).toBe("capture_requested");
  });
});

describe("a capture takes more than 0 and at most the authorized amount (spec §4.6)", () => {
  test.each(["0.00", "10.01"])("given 10.00 authorized, when %s is attempted, requested or captured, then it is refused", (amount) => {
    const authorized = storedCardAuthorized();
    refuses(authorized, ev.captureAttempted("att_c", amount));
    refuses(authorized, ev.captureRequested(amount));
    refuses(authorized, ev.captured(amount));
  });

  test("given 10.00 authorized, when 0.01 and 10.00 are captured, then both are accepted", () => {
    expect(accepts(storedCardAuthorized(), ev.captured("0.01")).context.amount_captured).toBe("0.01");
    expect(accepts(storedCardAuthorized(), ev.captured("10.00")).context.amount_captured).toBe("10.00");
  });

  test("given 10.00 authorized, when a capture carries a new authorization, then it is refused (the payment is already authorized)", () => {
    const authorized = storedCardAuthorized();
    refuses(authorized, ev.captureRequested("10.00", authorization("10.00")));
    refuses(authorized, ev.captured("10.00", authorization("10.00")));
  });
});

describe("a requested capture settles for exactly the amount requested (spec §3)", () => {
  const requested = () => given(...[storedCard("manual", "12.00"), ev.authAttempted("att_a", "12.00"), ev.authorized(authorization("12.00"), "att_a"), ev.captureRequested("10.00")]);

  test("given 10.00 requested, when 10.00 settles, then it succeeds; 9.99 or a settlement carrying an authorization is refused", () => {
    refuses(requested(), ev.captured("9.99"));
    refuses(requested(), ev.captured("10.00", authorization("10.00")));
    expect(accepts(requested(), ev.captured("10.00")).context).toMatchObject({ amount_captured: "10.00", amount_capture_requested: "0.00" });
  });
});

describe("a refund takes more than 0 and at most what is captured and not yet refunded", () => {
  test("given 10.00 captured, when 0.00 or 10.01 is refunded, then it is refused", () => {
    const captured = storedCardCaptured();
    for (const amount of ["0.00", "10.01"]) {
      refuses(captured, ev.refundAttempted("att_r", amount));
      refuses(captured, ev.refunded(amount));
    }
  });

  test("given 10.00 captured and 6.00 refunded, when 4.01 is refunded, then it is refused; 4.00 is accepted", () => {
    const partly = accepts(storedCardCaptured(), ev.refunded("6.00"));
    expect(partly.context.amount_refunded).toBe("6.00");
    refuses(partly, ev.refunded("4.01"));
    expect(accepts(partly, ev.refunded("4.00")).context.amount_refunded).toBe("10.00");
  });
});

describe("a failed authorization (spec §3, §7)", () => {
  test.each([
    ["USER_TIMEOUT", "requires_payment_method"],
    ["POS_CANCEL", "requires_payment_method"],
    ["ONLINE_DECLINED", "error"],
    [null, "error"],
  ] as const)("given a terminal collecting, when it fails with %s, then the payment is %s", (code, status) => {
    const collecting = given(created({ payment_method_types: "card_present", processor: "A" }), ev.terminalStarted("A_async"));
    const after = accepts(collecting, ev.failed(code));
    expect(after.value).toBe(status);
    expect(after.context.last_error_code).toBe(code);
  });

  test("given an intent with no stored card and nothing collecting, when a failure is reported, then it is refused (no authorization was tried)", () => {
    refuses(given(created()), ev.failed("ONLINE_DECLINED"));
  });
});

describe("one processor call at a time: attempts and their outcomes", () => {
  test("given a capture attempt in flight, when another attempt is made, then it is refused", () => {
    const inFlight = given(...[storedCard("manual"), ev.authAttempted("att_a"), ev.authorized(authorization("10.00"), "att_a"), ev.captureAttempted("att_c", "10.00")]);
    expect(inFlight.context.attempt).toMatchObject({ type: "CaptureAttempted", data: { attempt_id: "att_c" } });
    expect(inFlight.context.last_attempt_id).toBe("att_c");
    refuses(inFlight, ev.voidAttempted("att_v"));
    refuses(inFlight, ev.captureAttempted("att_c2", "10.00"));
  });

  test("given a capture attempt in flight, when an outcome names another attempt or none, then it is refused; its own outcome closes it", () => {
    const inFlight = given(storedCard("manual"), ev.authAttempted("att_a"), ev.authorized(authorization("10.00"), "att_a"), ev.captureAttempted("att_c", "10.00"));
    refuses(inFlight, ev.captured("10.00", null, "att_other"));
    refuses(inFlight, ev.captured("10.00"));
    const after = accepts(inFlight, ev.captured("10.00", null, "att_c"));
    expect(after.value).toBe("succeeded");
    expect(after.context.attempt).toBeNull();
    expect(after.context.last_attempt_id).toBe("att_c");
  });

  test("given a void attempt in flight, when a capture names that attempt, then it is refused (a void's outcome is a cancellation)", () => {
    const inFlight = given(storedCard("manual"), ev.authAttempted("att_a"), ev.authorized(authorization("10.00"), "att_a"), ev.voidAttempted("att_v"));
    refuses(inFlight, ev.captured("10.00", null, "att_v"));
    expect(accepts(inFlight, ev.canceled("att_v")).value).toBe("canceled");
  });

  test("given no attempt in flight, when an outcome names an attempt, then it is refused (it answers nothing)", () => {
    refuses(storedCardAuthorized(), ev.captured("10.00", null, "att_c"));
  });

  test("given an attempt in flight, when an abandonment names another attempt, then it is refused; naming it closes it and a new attempt may be made", () => {
    const inFlight = given(storedCard("manual"), ev.authAttempted("att_a"));
    refuses(inFlight, ev.abandoned("att_other"));
    const after = accepts(inFlight, ev.abandoned("att_a"));
    expect(after.value).toBe("requires_payment_method");
    expect(after.context.attempt).toBeNull();
    accepts(after, ev.authAttempted("att_b"));
  });

  test("given no attempt in flight, when an abandonment is reported, then it is refused", () => {
    refuses(storedCardAuthorized(), ev.abandoned("att_a"));
    refuses(storedCardCaptured(), ev.abandoned("att_auth"));
  });
});

describe("saving the card before capture (spec §2.3, §4.7: processor B card-not-present, allow_saving_card)", () => {
  test("given a processor B card collected by the client SDK and authorized, allow_saving_card true, when the card is saved, then it is recorded once", () => {
    const authorized = clientSdkAuthorized();
    expect(authorized.value).toBe("requires_capture");
    accepts(authorized, ev.saveAttempted("att_s"));
    const saved = accepts(authorized, ev.saved("cus_1"));
    expect(saved.value).toBe("requires_capture");
    expect(saved.context.saved_card).toEqual({ payment_method_id: "pm_saved", external_customer_id: "cus_1" });
    refuses(saved, ev.saveAttempted("att_s2"));
    refuses(saved, ev.saved("cus_1"));
  });

  test("given allow_saving_card false, when the card is saved before capture, then it is refused", () => {
    const authorized = clientSdkAuthorized({ allow_saving_card: false, external_customer_id: "cus_1" });
    refuses(authorized, ev.saveAttempted("att_s"));
    refuses(authorized, ev.saved("cus_1"));
  });

  test("given a card-present payment collected on a B reader, when the card is saved before capture, then it is refused", () => {
    const authorized = given(
      created({ payment_method_types: "card_present", processor: "B" }),
      ev.collected("tml_reader", TEST_CARD),
      ev.authAttempted("att_a"),
      ev.authorized(authorization("10.00"), "att_a"),
    );
    refuses(authorized, ev.saveAttempted("att_s"));
    refuses(authorized, ev.saved("cus_1"));
  });

  test("given a stored-card payment authorized, when its card is saved again, then it is refused (it is already on file)", () => {
    const authorized = storedCardAuthorized();
    refuses(authorized, ev.saveAttempted("att_s"));
    refuses(authorized, ev.saved("cus_1"));
  });

  test("given an intent for customer cus_1, when the card is saved for cus_2, then it is refused", () => {
    const authorized = clientSdkAuthorized({ external_customer_id: "cus_1" });
    refuses(authorized, ev.saveAttempted("att_s", "cus_2"));
    refuses(authorized, ev.saved("cus_2"));
    accepts(authorized, ev.saved("cus_1"));
  });
});

describe("saving the card after capture (spec §4.7: allow_saving_card or a customer on the intent)", () => {
  const syncTerminalCaptured = (intent: Partial<Intent>, terminal_type: "A_sync" | "A_async" = "A_sync") =>
    given(
      created({ payment_method_types: "card_present", processor: "A", capture_method: "automatic", ...intent }),
      ev.terminalStarted(terminal_type),
      ev.captured("10.00", authorization("10.00")),
    );

  test("given a card-present payment captured on an A_sync terminal with allow_saving_card, when the card is saved, then it is recorded", () => {
    const captured = syncTerminalCaptured({ allow_saving_card: true });
    expect(captured.value).toBe("succeeded");
    accepts(captured, ev.saveAttempted("att_s"));
    expect(accepts(captured, ev.saved("cus_1")).context.saved_card).toEqual({ payment_method_id: "pm_saved", external_customer_id: "cus_1" });
  });

  test("given neither allow_saving_card nor a customer on the intent, when the card is saved after capture, then it is refused", () => {
    const captured = syncTerminalCaptured({ allow_saving_card: null, external_customer_id: null });
    refuses(captured, ev.saveAttempted("att_s"));
    refuses(captured, ev.saved("cus_1"));
  });

  test("given a customer on the intent and allow_saving_card not sent, when the card is saved for that customer, then it is accepted (spec §4.8)", () => {
    accepts(syncTerminalCaptured({ allow_saving_card: null, external_customer_id: "cus_1" }), ev.saved("cus_1"));
  });

  test("given a customer on the intent but allow_saving_card false (the shopper declined), when the card is saved, then it is refused", () => {
    const captured = syncTerminalCaptured({ allow_saving_card: false, external_customer_id: "cus_1" });
    refuses(captured, ev.saveAttempted("att_s"));
    refuses(captured, ev.saved("cus_1"));
  });

  test("given a payment captured on an A_async terminal, when the card is saved, then it is refused (spec: the asynchronous terminal type does not support card on file)", () => {
    const captured = syncTerminalCaptured({ allow_saving_card: true }, "A_async");
    refuses(captured, ev.saveAttempted("att_s"));
    refuses(captured, ev.saved("cus_1"));
  });

  test("given a stored-card payment captured, when its card is saved, then it is refused (already on file)", () => {
    refuses(storedCardCaptured(), ev.saved("cus_1"));
  });
});

describe("capture method decides the step after authorization (spec §3)", () => {
  test("given a stored-card intent with automatic capture, when it is only authorized, then it is refused (automatic capture captures at once)", () => {
    refuses(given(storedCard("automatic")), ev.authorized(authorization("10.00")));
  });

  test("given a stored-card intent with manual capture, when it is authorized and captured at once, then it is refused", () => {
    const intent = given(storedCard("manual"));
    refuses(intent, ev.captured("10.00", authorization("10.00")));
    refuses(intent, ev.captureRequested("10.00", authorization("10.00")));
  });

  test("given a terminal collecting for a manual capture, when it reports a capture, then it is refused; an authorization is accepted", () => {
    const collecting = given(created({ payment_method_types: "card_present", processor: "A" }), ev.terminalStarted("A_sync"));
    refuses(collecting, ev.captured("10.00", authorization("10.00")));
    refuses(collecting, ev.captureRequested("10.00", authorization("10.00")));
    expect(accepts(collecting, ev.authorized(authorization("10.00"))).value).toBe("requires_capture");
  });

  test("given an intent without a stored card and nothing collecting, when an authorization or capture is reported, then it is refused", () => {
    const intent = given(created({ capture_method: "automatic" }));
    refuses(intent, ev.authorized(authorization("10.00")));
    refuses(intent, ev.captured("10.00", authorization("10.00")));
  });

  test("given an intent of 10.00, when 12.00 is authorized with a tip of 1.50 and a donation of 0.50, then it is accepted with 12.00 authorized", () => {
    const after = accepts(given(storedCard("manual")), ev.authorized(authorization("12.00", "1.50", "0.50")));
    expect(after.context).toMatchObject({ amount_authorized: "12.00", amount_capturable: "12.00", authorization: { tip_amount: "1.50", donation_amount: "0.50" } });
    refuses(given(storedCard("manual")), ev.authorized(authorization("12.00", "1.50", "0.00")));
  });
});

describe("what the machine records", () => {
  test("given 10.00 authorized, when it is voided, then nothing is capturable any more", () => {
    const after = accepts(storedCardAuthorized(), ev.canceled());
    expect(after.value).toBe("canceled");
    expect(after.context).toMatchObject({ amount_capturable: "0.00", amount_authorized: "10.00" });
  });

  test("given 10.00 authorized, when 6.00 is requested, then 6.00 is awaiting settlement and nothing else is capturable", () => {
    const after = accepts(storedCardAuthorized(), ev.captureRequested("6.00"));
    expect(after.value).toBe("capture_requested");
    expect(after.context).toMatchObject({ amount_capture_requested: "6.00", amount_capturable: "0.00", amount_captured: "0.00" });
  });

  test("given a terminal that timed out, when a terminal or the client SDK collects again, then the last error is cleared", () => {
    const timedOut = given(created({ payment_method_types: "card_present", processor: "A" }), ev.terminalStarted("A_async"), ev.failed("USER_TIMEOUT"));
    expect(timedOut.context).toMatchObject({ last_error: "failed", last_error_code: "USER_TIMEOUT" });
    const restarted = accepts(timedOut, ev.terminalStarted("A_sync", undefined));
    expect(restarted.context).toMatchObject({ last_error: null, last_error_code: null, processor: "A", terminal: { terminal_id: "tml_1", terminal_type: "A_sync" } });
    expect(accepts(timedOut, ev.collected("tml_reader", TEST_CARD)).context).toMatchObject({ last_error: null, last_error_code: null });
  });

  test("given a declined stored card (error), when it is authorized on retry, then the last error is cleared", () => {
    const declined = given(storedCard("manual"), ev.failed("ONLINE_DECLINED"));
    expect(declined.value).toBe("error");
    expect(accepts(declined, ev.authorized(authorization("10.00"))).context).toMatchObject({ last_error: null, last_error_code: null, card: CARD_NOT_PRESENT });
  });
});
