// The past events the decider specs are given: one constructor per event, defaults a reader can
// skip, and the payments of the spec's flows as event lists (what the engine would have appended).
import type { Authorization, Card, PaymentEvent, PaymentEventOf, TerminalType } from "../../../machines/events.js";
import type { TerminalRecord } from "../../../projections/terminals.js";
import { UNRECORDED } from "../../../src/engine/deciders/decision.js";

type Intent = PaymentEventOf<"PaymentIntentCreated">["data"];

export const ref = { external_account_id: "acct_1", payment_id: "pay_1" };

export const CARD: Card = { type: "card_present", brand: "visa", last_4: "4242", exp_month: "12", exp_year: 2031, cardholder_name: null, funding: "credit" };
export const CARD_NOT_PRESENT: Card = { ...CARD, type: "card_not_present" };

export function authorization(amount_authorized = "10.00", card = CARD): Authorization {
  return { amount_authorized, tip_amount: "0.00", donation_amount: "0.00", authorization_code: "A1", card, avs_response_code: null, avs_response_message: null };
}

export function terminal(terminal_type: TerminalType, terminal_id = "tml_1"): TerminalRecord {
  return { terminal_id, external_account_id: "acct_1", terminal_type, label: null, serial_number: null, date_created: "2026-01-01T00:00:00.000Z" };
}

export function created(overrides: Partial<Intent> = {}): PaymentEvent {
  return {
    type: "PaymentIntentCreated",
    version: 2,
    data: {
      payment_id: "pay_1",
      external_account_id: "acct_1",
      amount: "10.00",
      currency: "USD",
      payment_method_types: "card",
      capture_method: "manual",
      processor: "A",
      external_transaction_id: null,
      external_customer_id: null,
      payment_method_id: null,
      stored_card: null,
      allow_saving_card: null,
      client_secret: null,
      client_secret_sha256: null,
      date_created: "2026-01-01T00:00:00.000Z",
      ...overrides,
    },
  };
}

// an attempt as a decider decides it (UNRECORDED), or as recorded (its id)
export const ev = {
  authAttempted: (amount = "10.00", attempt_id = UNRECORDED): PaymentEvent & { type: "AuthorizationAttempted" } => ({ type: "AuthorizationAttempted", version: 1, data: { attempt_id, amount } }),
  terminalAttempted: (terminal_type: TerminalType = "A_async", attempt_id = UNRECORDED, terminal_id = "tml_1"): PaymentEvent & { type: "TerminalAuthorizationAttempted" } => ({
    type: "TerminalAuthorizationAttempted",
    version: 1,
    data: { attempt_id, terminal_id, terminal_type },
  }),
  terminalStarted: (terminal_type: TerminalType = "A_async", attempt_id?: string): PaymentEvent => ({ type: "TerminalAuthorizationStarted", version: 1, data: { terminal_id: "tml_1", terminal_type, attempt_id } }),
  collected: (terminal_id: string | null, card = terminal_id ? CARD : CARD_NOT_PRESENT): PaymentEvent => ({ type: "PaymentMethodCollected", version: 1, data: { card, terminal_id } }),
  authorized: (amount = "10.00", attempt_id?: string, card = CARD): PaymentEvent => ({ type: "PaymentAuthorized", version: 1, data: { ...authorization(amount, card), attempt_id } }),
  failed: (last_error_code: "ONLINE_DECLINED" | "USER_TIMEOUT" = "ONLINE_DECLINED", attempt_id?: string): PaymentEvent => ({
    type: "AuthorizationFailed",
    version: 1,
    data: { last_error: "failed", last_error_code, attempt_id },
  }),
  captureAttempted: (amount = "10.00", attempt_id = UNRECORDED): PaymentEvent & { type: "CaptureAttempted" } => ({ type: "CaptureAttempted", version: 1, data: { attempt_id, amount } }),
  captureRequested: (amount = "10.00", attempt_id?: string): PaymentEvent => ({ type: "CaptureRequested", version: 1, data: { amount, authorization: null, attempt_id } }),
  captured: (amount = "10.00", attempt_id?: string, a: Authorization | null = null): PaymentEvent => ({ type: "PaymentCaptured", version: 1, data: { amount, authorization: a, attempt_id } }),
  voidAttempted: (cancellation_reason: "requested_by_customer" | null = null, attempt_id = UNRECORDED): PaymentEvent & { type: "VoidAttempted" } => ({
    type: "VoidAttempted",
    version: 1,
    data: { attempt_id, cancellation_reason },
  }),
  canceled: (cancellation_reason: "requested_by_customer" | "abandoned" | null = null, attempt_id?: string): PaymentEvent => ({
    type: "PaymentCanceled",
    version: 1,
    data: { cancellation_reason, attempt_id },
  }),
  refundAttempted: (amount: string, reason: string | null = null, attempt_id = UNRECORDED): PaymentEvent & { type: "RefundAttempted" } => ({
    type: "RefundAttempted",
    version: 1,
    data: { attempt_id, amount, reason },
  }),
  refunded: (amount: string, attempt_id?: string): PaymentEvent => ({ type: "PaymentRefunded", version: 1, data: { refund_id: `re_${amount}`, amount, reason: null, attempt_id } }),
  saveAttempted: (external_customer_id = "cus_1", attempt_id = UNRECORDED): PaymentEvent & { type: "CardSaveAttempted" } => ({
    type: "CardSaveAttempted",
    version: 1,
    data: { attempt_id, external_customer_id },
  }),
  saved: (external_customer_id = "cus_1", attempt_id?: string): PaymentEvent => ({
    type: "CardSaved",
    version: 1,
    data: { payment_method_id: "pm_saved", external_account_id: "acct_1", external_customer_id, card: CARD_NOT_PRESENT, attempt_id },
  }),
  abandoned: (attempt_id: string, reason = "never_received"): PaymentEvent => ({ type: "AttemptAbandoned", version: 1, data: { attempt_id, reason } }),
  timedOut: (): PaymentEvent => ({ type: "AuthorizationFailed", version: 1, data: { last_error: "Timed out waiting for shopper", last_error_code: "USER_TIMEOUT" } }),
};

// --- the payments of the spec's flows, as their streams hold them -------------------------------

/** Spec §4.8 stored-card charge (processor A, card on file, customer cus_1): requires_payment_method. */
export const storedCardIntent = (capture_method: "manual" | "automatic" = "manual", amount = "10.00") => [
  created({ payment_method_id: "pm_1", stored_card: CARD_NOT_PRESENT, external_customer_id: "cus_1", capture_method, amount }),
];

/** A stored-card payment authorized for its amount (requires_capture). */
export const storedCardAuthorized = (amount = "10.00") => [...storedCardIntent("manual", amount), ev.authAttempted(amount, "att_1"), ev.authorized(amount, "att_1", CARD_NOT_PRESENT)];

/** A stored-card payment captured in full (succeeded). */
export const storedCardCaptured = (amount = "10.00") => [...storedCardAuthorized(amount), ev.captureAttempted(amount, "att_2"), ev.captured(amount, "att_2")];

/** A processor A card-present intent (requires_payment_method). */
export const cardPresentIntent = (overrides: Partial<Intent> = {}) => [created({ payment_method_types: "card_present", ...overrides })];

/** Its terminal asked for the card and is collecting (payment_method_requested). */
export const collectingOnTerminal = (terminal_type: "A_async" | "A_sync" = "A_async", overrides: Partial<Intent> = {}) => [
  ...cardPresentIntent(overrides),
  ev.terminalAttempted(terminal_type, "att_1"),
  ev.terminalStarted(terminal_type, "att_1"),
];

/** A terminal payment authorized (requires_capture) and captured (succeeded). */
export const terminalAuthorized = (terminal_type: "A_async" | "A_sync" = "A_async", overrides: Partial<Intent> = {}) => [...collectingOnTerminal(terminal_type, overrides), ev.authorized()];
export const terminalCaptured = (terminal_type: "A_async" | "A_sync" = "A_async", overrides: Partial<Intent> = {}) => [
  ...terminalAuthorized(terminal_type, overrides),
  ev.captureAttempted("10.00", "att_2"),
  ev.captured("10.00", "att_2"),
];

/** Processor B, card not present: the client SDK's card form (requires_payment_method). */
export const clientSdkIntent = (overrides: Partial<Intent> = {}) => [created({ processor: "B", ...overrides })];

/** Processor B: the client SDK collected the card on a reader, manual capture: it waits to be processed (payment_method_requested). */
export const collectedOnReader = (overrides: Partial<Intent> = {}) => [
  ...clientSdkIntent({ payment_method_types: "card_present", ...overrides }),
  ev.collected("rdr_1"),
];

/** Processor B card form: collected and processed at once, authorized (requires_capture). */
export const processedByCollect = (overrides: Partial<Intent> = {}) => [
  ...clientSdkIntent(overrides),
  ev.collected(null),
  ev.authAttempted("10.00", "att_1"),
  ev.authorized("10.00", "att_1", CARD_NOT_PRESENT),
];
