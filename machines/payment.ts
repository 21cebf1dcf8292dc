// The payment intent as an XState v5 machine: the single source of truth for which domain event
// may follow which. States are the spec's statuses (§3) plus `canceled` (void, an extension);
// events are exactly the domain events of ./events.ts. Pure: guards and assigns only.
//
// Processor calls are attempts: `XxxAttempted` (a self-transition, the status does not change)
// opens one in the context, its outcome event closes it (it names the attempt), or
// AttemptAbandoned does. While an attempt is in flight nothing else may happen to the payment,
// so no capture can race a void, no refund another refund. Outcomes without an attempt id are
// what processors report on their own and what streams written before attempts hold: accepted
// only while no attempt is in flight.
import { and, assertEvent, assign, setup } from "xstate";
import { amounts, formatAmount } from "../src/money.js";
import { collectsOnClient } from "./client-sdk.js";
import { closesAttempt, type AttemptEvent, type Authorization, type Card, type PaymentEvent, type PaymentEventOf, type TerminalType } from "./events.js";
import { failureLeadsTo, type LastErrorCode } from "./failures.js";
import { STATUS_TAGS, type StatusTag } from "./statuses.js";

type Intent = PaymentEventOf<"PaymentIntentCreated">["data"];

export interface PaymentContext {
  /** Set by PaymentIntentCreated; null only in the state `none`. */
  intent: Intent | null;
  processor: Intent["processor"] | null;
  /** attempt_id: the attempt that started the terminal (the key to ask the processor about it). */
  terminal: { terminal_id: string; terminal_type: TerminalType; attempt_id?: string } | null;
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
  /** The processor call in flight (its attempt event): appended before the call, closed by its outcome. */
  attempt: AttemptEvent | null;
  /** The last attempt made (kept after it closes): the key of a call whose result is reported later. */
  last_attempt_id: string | null;
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
  attempt: null,
  last_attempt_id: null,
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

const attemptIdOf = (event: PaymentEvent): string | null => (event.data as { attempt_id?: string }).attempt_id ?? null;

const coversIntent = (context: PaymentContext, a: Authorization) =>
  compare(a.amount_authorized, sum(sum(intentOf(context).amount, a.tip_amount), a.donation_amount)) === 0;

export const paymentMachine = setup({
  types: { context: {} as PaymentContext, events: {} as PaymentEvent, tags: "" as StatusTag },
  guards: {
    // who collects the card
    isStoredCard: ({ context }: Args) => intentOf(context).payment_method_id !== null,
    isCardPresent: ({ context }: Args) => intentOf(context).payment_method_types === "card_present",
    isProcessorATerminal: ({ event }: Args) => {
      assertEvent(event, ["TerminalAuthorizationAttempted", "TerminalAuthorizationStarted"]);
      return event.data.terminal_type !== "B_reader";
    },
    hasCollectedCard: ({ context }: Args) => context.processor === "B" && context.card !== null,
    collectsWithClientSdk: ({ context, event }: Args) => {
      assertEvent(event, "PaymentMethodCollected");
      const intent = intentOf(context);
      // on a reader for a card-present payment, on the card form otherwise
      return collectsOnClient(intent) && (event.data.terminal_id !== null) === (intent.payment_method_types === "card_present");
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
    // attempts: one processor call in flight at a time; an outcome answers the attempt in flight
    noAttemptInFlight: ({ context }: Args) => context.attempt === null,
    namesNoAttempt: ({ event }: Args) => attemptIdOf(event) === null,
    answersAttempt: ({ context, event }: Args) =>
      context.attempt === null ? attemptIdOf(event) === null : closesAttempt(context.attempt, event) === "answered",
    abandonsAttempt: ({ context, event }: Args) => context.attempt !== null && closesAttempt(context.attempt, event) === "abandoned",
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
        intent.allow_saving_card === true
      );
    },
    canSaveAfterCapture: ({ context, event }: Args) => {
      const intent = intentOf(context);
      // allowed, or not said either way with a customer on the intent (spec §4.8); never when refused
      return savableCard(context, event) && (intent.allow_saving_card === true || (intent.allow_saving_card === null && intent.external_customer_id !== null));
    },
    // follow-ups (the states' meta): what follows on its own once the payment reaches the state
    savesCardOnTerminal: ({ context }: Args) => {
      const intent = intentOf(context);
      return context.terminal?.terminal_type === "A_sync" && intent.allow_saving_card === true && intent.external_customer_id !== null;
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
    recordAttempt: assign(({ event }) => ({ attempt: event as AttemptEvent, last_attempt_id: attemptIdOf(event) })),
    closeAttempt: assign({ attempt: null }),
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
      const { card, attempt_id: _answered, ...rest } = authorization as Authorization & { attempt_id?: string };
      const authorized = fmt(context, authorization.amount_authorized);
      return {
        card,
        authorization: rest,
        amount_authorized: authorized,
        amount_capturable: authorized,
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
    recordCapture: assign(({ context, event }) => {
      const zero = fmt(context, 0);
      return { amount_captured: fmt(context, amountOf(event)), amount_capturable: zero, amount_capture_requested: zero };
    }),
    releaseAuthorization: assign(({ context }) => ({ amount_capturable: fmt(context, 0) })),
    recordRefund: assign(({ context, event }) => ({
      amount_refunded: fmt(context, sum(context.amount_refunded, amountOf(event))),
    })),
    recordReference: assign(({ context, event }) => {
      assertEvent(event, "TransactionReferenceGiven");
      return { intent: { ...intentOf(context), external_transaction_id: event.data.external_transaction_id } };
    }),
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
    requires_payment_method: { on: authorizationSteps() },
    payment_method_requested: {
      // the terminal or reader is collecting: its outcome is reported by the processor
      tags: [...STATUS_TAGS.payment_method_requested],
      on: {
        // processor B: the card the client SDK collected is authorized (with the caller's reference, §4.4)
        TransactionReferenceGiven: { guard: and(["noAttemptInFlight", "hasCollectedCard"]), actions: "recordReference" },
        AuthorizationAttempted: attempt("hasCollectedCard"),
        // terminal collects card (manual; automatic passes through and moves on)
        PaymentAuthorized: outcome({ target: "requires_capture", guards: ["authorizesIntentAmount"], actions: "recordAuthorization" }),
        // terminal collects, capture requested / terminal collects and captures
        CaptureRequested: outcome({
          target: "capture_requested",
          guards: ["isAutomaticCapture", "authorizesAndCapturesInFull"],
          actions: ["recordAuthorization", "recordCaptureRequest"],
        }),
        PaymentCaptured: outcome({
          target: "succeeded",
          guards: ["isAutomaticCapture", "authorizesAndCapturesInFull"],
          actions: ["recordAuthorization", "recordCapture"],
        }),
        // timeout or cancellation / decline
        AuthorizationFailed: [
          outcome({ target: "requires_payment_method", guards: ["isRetryableFailure"], actions: "recordFailure" }),
          outcome({ target: "error", actions: "recordFailure" }),
        ],
        PaymentCanceled: outcome({ target: "canceled", actions: "releaseAuthorization" }),
        AttemptAbandoned: abandon(),
      },
    },
    requires_capture: {
      // an automatic-capture payment is captured as soon as it is authorized (spec §3)
      meta: followUps({ command: "capture", guard: "isAutomaticCapture" }),
      on: {
        CaptureAttempted: attempt("withinCapturable"),
        CaptureRequested: outcome({ target: "capture_requested", guards: ["withinCapturable"], actions: "recordCaptureRequest" }),
        PaymentCaptured: outcome({ target: "succeeded", guards: ["withinCapturable"], actions: "recordCapture" }),
        CardSaveAttempted: attempt("canSaveBeforeCapture"),
        CardSaved: outcome({ guards: ["canSaveBeforeCapture"], actions: "recordSavedCard" }),
        VoidAttempted: attempt(),
        PaymentCanceled: outcome({ target: "canceled", actions: "releaseAuthorization" }),
        AttemptAbandoned: abandon(),
      },
    },
    capture_requested: {
      // captured, the processor settles it later: a synchronous terminal saves the card now, so the token is in that answer (spec §4.4, §4.8)
      tags: [...STATUS_TAGS.capture_requested],
      meta: followUps({ command: "save_card", guard: "savesCardOnTerminal" }),
      on: {
        // the processor's own report: it answers no call, so a card save in flight stays open
        PaymentCaptured: { target: "succeeded", guard: and(["namesNoAttempt", "settlesRequestedCapture"]), actions: "recordCapture" },
        CardSaveAttempted: attempt("canSaveAfterCapture"),
        CardSaved: outcome({ guards: ["canSaveAfterCapture"], actions: "recordSavedCard" }),
        AttemptAbandoned: abandon(),
      },
    },
    succeeded: {
      // a synchronous terminal saves the card once captured, so the token is in that answer (spec §4.4, §4.8)
      meta: followUps({ command: "save_card", guard: "savesCardOnTerminal" }),
      on: {
        RefundAttempted: attempt("withinRefundable"),
        PaymentRefunded: outcome({ guards: ["withinRefundable"], actions: "recordRefund" }),
        CardSaveAttempted: attempt("canSaveAfterCapture"),
        CardSaved: outcome({ guards: ["canSaveAfterCapture"], actions: "recordSavedCard" }),
        AttemptAbandoned: abandon(),
      },
    },
    // retry with the same or another card
    error: { on: authorizationSteps() },
    canceled: { type: "final" },
  },
});

/**
 * requires_payment_method and error take the same steps (spec §3: "requires_payment_method or
 * error | auth again"): start a terminal, collect with the client SDK, charge a stored card
 * (authorized; or authorized and captured at once), fail, or cancel.
 */
function authorizationSteps() {
  return {
    // the caller's reference given with the authorization (spec §4.4 external_payment_id)
    TransactionReferenceGiven: { guard: "noAttemptInFlight", actions: "recordReference" },
    TerminalAuthorizationAttempted: attempt("isCardPresent", "isProcessorATerminal"),
    TerminalAuthorizationStarted: outcome({ target: "payment_method_requested", guards: ["isCardPresent", "isProcessorATerminal"], actions: "recordTerminal" }),
    PaymentMethodCollected: { target: "payment_method_requested", guard: and(["noAttemptInFlight", "collectsWithClientSdk"]), actions: "recordCollectedCard" },
    AuthorizationAttempted: attempt("isStoredCard"),
    PaymentAuthorized: outcome({ target: "requires_capture", guards: ["isStoredCard", "isManualCapture", "authorizesIntentAmount"], actions: "recordAuthorization" }),
    CaptureRequested: authorizeAndCaptureStoredCard("capture_requested"),
    PaymentCaptured: authorizeAndCaptureStoredCard("succeeded"),
    AuthorizationFailed: [
      outcome({ target: "requires_payment_method", guards: ["isStoredCard", "isRetryableFailure"], actions: "recordFailure" }),
      outcome({ target: "error", guards: ["isStoredCard"], actions: "recordFailure" }),
    ],
    PaymentCanceled: outcome({ target: "canceled", actions: "releaseAuthorization" }),
    AttemptAbandoned: abandon(),
  } as const;
}

function authorizeAndCaptureStoredCard(target: "capture_requested" | "succeeded") {
  return outcome({
    target,
    guards: ["isStoredCard", "isAutomaticCapture", "authorizesAndCapturesInFull"],
    actions: ["recordAuthorization", target === "succeeded" ? "recordCapture" : "recordCaptureRequest"],
  });
}

type GuardName =
  | "isStoredCard" | "isCardPresent" | "isProcessorATerminal" | "hasCollectedCard" | "collectsWithClientSdk" | "isManualCapture"
  | "isAutomaticCapture" | "authorizesIntentAmount" | "authorizesAndCapturesInFull" | "withinCapturable" | "settlesRequestedCapture"
  | "withinRefundable" | "isRetryableFailure" | "canSaveBeforeCapture" | "canSaveAfterCapture" | "savesCardOnTerminal";
type ActionName =
  | "recordTerminal" | "recordAuthorization" | "recordFailure" | "recordCaptureRequest" | "recordCapture"
  | "releaseAuthorization" | "recordRefund" | "recordSavedCard" | "recordReference";
type Status = "requires_payment_method" | "payment_method_requested" | "requires_capture" | "capture_requested" | "succeeded" | "error" | "canceled";

/** A processor call is about to be made (the status stays); only when none is in flight. */
function attempt(...guards: GuardName[]) {
  return { guard: and(["noAttemptInFlight", ...guards]), actions: "recordAttempt" } as const;
}

/**
 * What a processor call answered (or the processor reported on its own): allowed when the guards
 * hold and it answers the attempt in flight (none in flight: it names none); closes the attempt.
 */
function outcome(t: { target?: Status; guards?: GuardName[]; actions: ActionName | ActionName[] }) {
  const actions = typeof t.actions === "string" ? [t.actions] : t.actions;
  return { target: t.target, guard: and(["answersAttempt", ...(t.guards ?? [])]), actions: [...actions, "closeAttempt"] } as const;
}

/**
 * A step that follows on its own once the payment is in the state, when the guard (on the
 * context) holds and the machine allows the command: the engine's policy makes it
 * (src/engine/policy/follow-ups.ts); the machine's definition lists it (machines/definition.ts).
 */
export interface FollowUpRule {
  command: "capture" | "save_card";
  guard: GuardName;
}

function followUps(...rules: FollowUpRule[]) {
  return { followUps: rules };
}

/** The processor did nothing for the attempt in flight: the command may be tried again. */
function abandon() {
  return { guard: "abandonsAttempt", actions: "closeAttempt" } as const;
}

function savableCard(context: PaymentContext, event: PaymentEvent): boolean {
  assertEvent(event, ["CardSaveAttempted", "CardSaved"]);
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
export type { PaymentStatus } from "./statuses.js";
export { PAYMENT_STATUSES } from "./statuses.js";
