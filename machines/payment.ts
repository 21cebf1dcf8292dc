// The payment intent as an XState v5 machine: the single source of truth for which domain event
// may follow which. States are the spec's statuses (§3) plus `canceled` (void, an extension);
// events are exactly the domain events of ./events.ts. Pure: guards and assigns only.
import { and, assertEvent, assign, setup, type SnapshotFrom } from "xstate";
import { amounts, formatAmount } from "../src/money.js";
import type { Authorization, Card, PaymentEvent, PaymentEventOf, TerminalType } from "./events.js";
import { failureLeadsTo, type LastErrorCode } from "./failures.js";

type Intent = PaymentEventOf<"PaymentIntentCreated">["data"];

export interface PaymentContext {
  /** Set by PaymentIntentCreated; null only in the state `none`. */
  intent: Intent | null;
  processor: Intent["processor"] | null;
  terminal: { terminal_id: string; terminal_type: TerminalType } | null;
  card: Card | null;
  authorization: Omit<Authorization, "card"> | null;
  amount_authorized: string;
  /** What a capture may still take: the authorization until it is captured or released. */
  amount_capturable: string;
  amount_capture_requested: string;
  amount_captured: string;
  amount_refunded: string;
  last_error: string | null;
  last_error_code: LastErrorCode | null;
  saved_card: { payment_method_id: string; external_customer_id: string } | null;
}

export const initialPaymentContext: PaymentContext = {
  intent: null,
  processor: null,
  terminal: null,
  card: null,
  authorization: null,
  amount_authorized: "0",
  amount_capturable: "0",
  amount_capture_requested: "0",
  amount_captured: "0",
  amount_refunded: "0",
  last_error: null,
  last_error_code: null,
  saved_card: null,
};

type Args = { context: PaymentContext; event: PaymentEvent };
const intentOf = (context: PaymentContext): Intent => {
  if (!context.intent) throw new Error("payment intent not created");
  return context.intent;
};
const fmt = (context: PaymentContext, v: string | 0) => formatAmount(v, intentOf(context).currency);
const amountOf = (event: PaymentEvent) => (event as { data: { amount: string } }).data.amount;
const { compare, sum, difference } = amounts;
/** Captured by a single processor step that also authorized (spec §3: "collects and captures"). */
const authorizationOf = (event: PaymentEvent): Authorization | null =>
  (event as { data: { authorization?: Authorization | null } }).data.authorization ?? null;

const coversIntent = (context: PaymentContext, a: Authorization) =>
  compare(a.amount_authorized, sum(sum(intentOf(context).amount, a.tip_amount), a.donation_amount)) === 0;

export const paymentMachine = setup({
  types: { context: {} as PaymentContext, events: {} as PaymentEvent, tags: "" as "awaiting_processor" | "collecting_card" },
  guards: {
    // who collects the card
    isStoredCard: ({ context }: Args) => intentOf(context).payment_method_id !== null,
    isCardPresent: ({ context }: Args) => intentOf(context).payment_method_types === "card_present",
    isProcessorATerminal: ({ event }: Args) => {
      assertEvent(event, "TerminalAuthorizationStarted");
      return event.data.terminal_type !== "B_reader";
    },
    collectsWithClientSdk: ({ context, event }: Args) => {
      assertEvent(event, "PaymentMethodCollected");
      const intent = intentOf(context);
      if (intent.payment_method_types === "card_present") return event.data.terminal_id !== null;
      return intent.processor === "B" && intent.payment_method_id === null && event.data.terminal_id === null;
    },
    // capture method
    isManualCapture: ({ context }: Args) => intentOf(context).capture_method === "manual",
    isAutomaticCapture: ({ context }: Args) => intentOf(context).capture_method === "automatic",
    // amounts
    authorizesIntentAmount: ({ context, event }: Args) => {
      assertEvent(event, "PaymentAuthorized");
      return coversIntent(context, event.data);
    },
    authorizesAndCapturesInFull: ({ context, event }: Args) => {
      const authorization = authorizationOf(event);
      return authorization !== null && coversIntent(context, authorization) && compare(amountOf(event), authorization.amount_authorized) === 0;
    },
    withinCapturable: ({ context, event }: Args) =>
      authorizationOf(event) === null && compare(amountOf(event), "0") > 0 && compare(amountOf(event), context.amount_authorized) <= 0,
    settlesRequestedCapture: ({ context, event }: Args) =>
      authorizationOf(event) === null && compare(amountOf(event), context.amount_capture_requested) === 0,
    withinRefundable: ({ context, event }: Args) =>
      compare(amountOf(event), "0") > 0 && compare(amountOf(event), difference(context.amount_captured, context.amount_refunded)) <= 0,
    // failures (spec §7 table in ./failures.ts)
    isRetryableFailure: ({ event }: Args) => {
      assertEvent(event, "AuthorizationFailed");
      return failureLeadsTo(event.data.last_error_code) === "requires_payment_method";
    },
    // card on file (spec §2.3, §4.7, §4.8)
    canSaveBeforeCapture: ({ context, event }: Args) => {
      const intent = intentOf(context);
      return (
        savableCard(context, event) &&
        intent.processor === "B" &&
        intent.payment_method_types === "card" &&
        intent.allow_saving_card
      );
    },
    canSaveAfterCapture: ({ context, event }: Args) => {
      const intent = intentOf(context);
      return savableCard(context, event) && (intent.allow_saving_card || intent.external_customer_id !== null);
    },
  },
  actions: {
    recordIntent: assign(({ event }) => {
      assertEvent(event, "PaymentIntentCreated");
      const intent = event.data;
      const zero = formatAmount(0, intent.currency);
      return {
        intent,
        processor: intent.processor,
        card: intent.stored_card,
        amount_authorized: zero,
        amount_capturable: zero,
        amount_capture_requested: zero,
        amount_captured: zero,
        amount_refunded: zero,
      };
    }),
    recordTerminal: assign(({ event }) => {
      assertEvent(event, "TerminalAuthorizationStarted");
      return { terminal: { ...event.data }, processor: "A" as const, last_error: null, last_error_code: null };
    }),
    recordCollectedCard: assign(({ event }) => {
      assertEvent(event, "PaymentMethodCollected");
      const { terminal_id, card } = event.data;
      return {
        card,
        processor: "B" as const,
        terminal: terminal_id === null ? null : { terminal_id, terminal_type: "B_reader" as const },
        last_error: null,
        last_error_code: null,
      };
    }),
    recordAuthorization: assign(({ context, event }) => {
      const authorization = event.type === "PaymentAuthorized" ? event.data : authorizationOf(event);
      if (!authorization) return {};
      const { card, ...rest } = authorization;
      return {
        card,
        authorization: rest,
        amount_authorized: fmt(context, authorization.amount_authorized),
        amount_capturable: fmt(context, authorization.amount_authorized),
        last_error: null,
        last_error_code: null,
      };
    }),
    recordFailure: assign(({ event }) => {
      assertEvent(event, "AuthorizationFailed");
      return { last_error: event.data.last_error, last_error_code: event.data.last_error_code };
    }),
    // a capture takes what it captures; the rest of the authorization is released (partial capture)
    recordCaptureRequest: assign(({ context, event }) => ({
      amount_capture_requested: fmt(context, amountOf(event)),
      amount_capturable: fmt(context, 0),
    })),
    recordCapture: assign(({ context, event }) => ({
      amount_captured: fmt(context, amountOf(event)),
      amount_capturable: fmt(context, 0),
      amount_capture_requested: fmt(context, 0),
    })),
    releaseAuthorization: assign(({ context }) => ({ amount_capturable: fmt(context, 0) })),
    recordRefund: assign(({ context, event }) => ({
      amount_refunded: fmt(context, sum(context.amount_refunded, amountOf(event))),
    })),
    recordSavedCard: assign(({ event }) => {
      assertEvent(event, "CardSaved");
      const { payment_method_id, external_customer_id } = event.data;
      return { saved_card: { payment_method_id, external_customer_id } };
    }),
  },
}).createMachine({
  id: "payment",
  initial: "none",
  context: initialPaymentContext,
  states: {
    // (none) --create intent--> requires_payment_method
    none: {
      on: { PaymentIntentCreated: { target: "requires_payment_method", actions: "recordIntent" } },
    },
    requires_payment_method: { on: authorizationAttempts() },
    payment_method_requested: {
      // the terminal or reader is collecting: its outcome is reported by the processor
      tags: ["awaiting_processor", "collecting_card"],
      on: {
        // terminal collects card (manual; automatic passes through and moves on)
        PaymentAuthorized: { target: "requires_capture", guard: "authorizesIntentAmount", actions: "recordAuthorization" },
        // terminal collects, capture requested / terminal collects and captures
        CaptureRequested: {
          target: "capture_requested",
          guard: and(["isAutomaticCapture", "authorizesAndCapturesInFull"]),
          actions: ["recordAuthorization", "recordCaptureRequest"],
        },
        PaymentCaptured: {
          target: "succeeded",
          guard: and(["isAutomaticCapture", "authorizesAndCapturesInFull"]),
          actions: ["recordAuthorization", "recordCapture"],
        },
        // timeout or cancellation / decline
        AuthorizationFailed: [
          { target: "requires_payment_method", guard: "isRetryableFailure", actions: "recordFailure" },
          { target: "error", actions: "recordFailure" },
        ],
        PaymentCanceled: { target: "canceled", actions: "releaseAuthorization" },
      },
    },
    requires_capture: {
      on: {
        CaptureRequested: { target: "capture_requested", guard: "withinCapturable", actions: "recordCaptureRequest" },
        PaymentCaptured: { target: "succeeded", guard: "withinCapturable", actions: "recordCapture" },
        CardSaved: { guard: "canSaveBeforeCapture", actions: "recordSavedCard" },
        PaymentCanceled: { target: "canceled", actions: "releaseAuthorization" },
      },
    },
    capture_requested: {
      // the capture settles when the processor confirms it
      tags: ["awaiting_processor"],
      on: {
        PaymentCaptured: { target: "succeeded", guard: "settlesRequestedCapture", actions: "recordCapture" },
      },
    },
    succeeded: {
      on: {
        PaymentRefunded: { guard: "withinRefundable", actions: "recordRefund" },
        CardSaved: { guard: "canSaveAfterCapture", actions: "recordSavedCard" },
      },
    },
    // retry with the same or another card
    error: { on: authorizationAttempts() },
    canceled: { type: "final" },
  },
});

/**
 * requires_payment_method and error take the same steps (spec §3: "requires_payment_method or
 * error | auth again"): start a terminal, collect with the client SDK, charge a stored card
 * (authorized; or authorized and captured at once), fail, or cancel.
 */
function authorizationAttempts() {
  return {
    TerminalAuthorizationStarted: startOnTerminal(),
    PaymentMethodCollected: collectWithClientSdk(),
    PaymentAuthorized: authorizeStoredCard(),
    CaptureRequested: authorizeAndCaptureStoredCard("capture_requested"),
    PaymentCaptured: authorizeAndCaptureStoredCard("succeeded"),
    AuthorizationFailed: storedCardFailure(),
    PaymentCanceled: { target: "canceled", actions: "releaseAuthorization" },
  } as const;
}

function startOnTerminal() {
  return {
    target: "payment_method_requested",
    guard: and(["isCardPresent", "isProcessorATerminal"]),
    actions: "recordTerminal",
  } as const;
}
function collectWithClientSdk() {
  return { target: "payment_method_requested", guard: "collectsWithClientSdk", actions: "recordCollectedCard" } as const;
}
function authorizeStoredCard() {
  return {
    target: "requires_capture",
    guard: and(["isStoredCard", "isManualCapture", "authorizesIntentAmount"]),
    actions: "recordAuthorization",
  } as const;
}
function authorizeAndCaptureStoredCard(target: "capture_requested" | "succeeded") {
  return {
    target,
    guard: and(["isStoredCard", "isAutomaticCapture", "authorizesAndCapturesInFull"]),
    actions: ["recordAuthorization", target === "succeeded" ? "recordCapture" : "recordCaptureRequest"],
  } as const;
}
function storedCardFailure() {
  return [
    { target: "requires_payment_method", guard: and(["isStoredCard", "isRetryableFailure"]), actions: "recordFailure" },
    { target: "error", guard: "isStoredCard", actions: "recordFailure" },
  ] as const;
}

function savableCard(context: PaymentContext, event: PaymentEvent): boolean {
  assertEvent(event, "CardSaved");
  const intent = intentOf(context);
  return (
    context.card !== null &&
    context.saved_card === null &&
    intent.payment_method_id === null &&
    context.terminal?.terminal_type !== "A_async" &&
    (intent.external_customer_id === null || intent.external_customer_id === event.data.external_customer_id)
  );
}

export type PaymentMachine = typeof paymentMachine;
export type PaymentStatus = Exclude<SnapshotFrom<typeof paymentMachine>["value"], "none">;
export const PAYMENT_STATUSES = Object.keys(paymentMachine.config.states!).filter((s) => s !== "none") as PaymentStatus[];
