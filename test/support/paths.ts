// Path walking support: the machine's simple paths (xstate/graph) over a set of intent variants,
// and a driver that makes the engine take each step of a path through its public API.
import { getSimplePaths } from "xstate/graph";
import type { Authorization, Card, PaymentEvent, PaymentEventOf } from "../../machines/events.js";
import { applyPaymentEvent, type PaymentSnapshot } from "../../machines/fold.js";
import { paymentMachine } from "../../machines/payment.js";
import type { Engine } from "../../src/engine.js";
import { TEST_CARD, type ScriptedProcessors } from "./scripted-processor.js";

type Intent = PaymentEventOf<"PaymentIntentCreated">["data"];

/** Intent shapes that together reach every transition of the machine. */
export const VARIANTS = {
  terminal_manual: { account: "acct_a", payment_method_types: "card_present", capture_method: "manual", customer: null, pm: null, saving: false },
  terminal_automatic: { account: "acct_a", payment_method_types: "card_present", capture_method: "automatic", customer: null, pm: null, saving: false },
  stored_manual: { account: "acct_a", payment_method_types: "card", capture_method: "manual", customer: "cus_1", pm: "pm_card_visa", saving: false },
  stored_automatic: { account: "acct_a", payment_method_types: "card", capture_method: "automatic", customer: "cus_1", pm: "pm_card_visa", saving: false },
  sdk_form_saving: { account: "acct_b", payment_method_types: "card", capture_method: "manual", customer: null, pm: null, saving: true },
  sdk_reader_customer: { account: "acct_b", payment_method_types: "card_present", capture_method: "manual", customer: "cus_2", pm: null, saving: false },
} as const;
export type Variant = keyof typeof VARIANTS;

/** Each account has an asynchronous processor A terminal and a processor B reader. */
export type World = Record<string, { asyncTerminal: string; reader: string }>;

const AMOUNT = "10.00";
const PARTIAL_CAPTURE = "7.50";
const PARTIAL_REFUND = "2.50";

function createdEvent(variant: Variant): PaymentEvent {
  const v = VARIANTS[variant];
  return {
    type: "PaymentIntentCreated",
    version: 1,
    data: {
      payment_id: `model_${variant}`,
      external_account_id: v.account,
      amount: AMOUNT,
      currency: "USD",
      payment_method_types: v.payment_method_types,
      capture_method: v.capture_method,
      processor: v.account === "acct_a" ? "A" : "B",
      external_transaction_id: variant,
      external_customer_id: v.customer,
      payment_method_id: v.pm,
      stored_card: v.pm ? { ...TEST_CARD, type: "card_not_present" } : null,
      allow_saving_card: v.saving,
      client_secret: null,
      date_created: "model",
    },
  };
}

const cardType = (intent: Intent): Card["type"] => (intent.payment_method_types === "card" ? "card_not_present" : "card_present");

function authorizationFor(snapshot: PaymentSnapshot): Authorization {
  const intent = snapshot.context.intent!;
  return {
    amount_authorized: intent.amount,
    tip_amount: "0.00",
    donation_amount: "0.00",
    authorization_code: "A1B2C3",
    card: snapshot.context.card ?? { ...TEST_CARD, type: cardType(intent) },
    avs_response_code: 0,
    avs_response_message: "Address and postal code match",
  };
}

/** Every event worth trying in a state, with payloads that fit its context. */
export function candidateEvents(world: World) {
  return (snapshot: PaymentSnapshot): PaymentEvent[] => {
    const ctx = snapshot.context;
    if (!ctx.intent) return (Object.keys(VARIANTS) as Variant[]).map(createdEvent);
    const intent = ctx.intent;
    const authorization = authorizationFor(snapshot);
    const refundable = (Number(ctx.amount_captured) - Number(ctx.amount_refunded)).toFixed(2);
    return [
      { type: "TerminalAuthorizationStarted", version: 1, data: { terminal_id: world[intent.external_account_id]!.asyncTerminal, terminal_type: "A_async" } },
      { type: "PaymentMethodCollected", version: 1, data: { card: { ...TEST_CARD, type: cardType(intent) }, terminal_id: intent.payment_method_types === "card_present" ? world[intent.external_account_id]!.reader : null } },
      { type: "PaymentAuthorized", version: 1, data: authorization },
      { type: "CaptureRequested", version: 1, data: { amount: authorization.amount_authorized, authorization } },
      { type: "PaymentCaptured", version: 1, data: { amount: authorization.amount_authorized, authorization } },
      { type: "CaptureRequested", version: 1, data: { amount: PARTIAL_CAPTURE, authorization: null } },
      { type: "PaymentCaptured", version: 1, data: { amount: PARTIAL_CAPTURE, authorization: null } },
      { type: "AuthorizationFailed", version: 1, data: { last_error: "Canceled by shopper", last_error_code: "USER_CANCEL" } },
      { type: "AuthorizationFailed", version: 1, data: { last_error: "The processor declined the card", last_error_code: "ONLINE_DECLINED" } },
      { type: "AuthorizationFailed", version: 1, data: { last_error: "Your card was declined", last_error_code: null } },
      { type: "PaymentCanceled", version: 1, data: { cancellation_reason: "requested_by_customer" } },
      { type: "PaymentRefunded", version: 1, data: { refund_id: "re_model", amount: PARTIAL_REFUND, reason: null } },
      { type: "PaymentRefunded", version: 1, data: { refund_id: "re_model", amount: refundable, reason: null } },
      { type: "CardSaved", version: 1, data: { payment_method_id: "pm_saved", external_account_id: intent.external_account_id, external_customer_id: intent.external_customer_id ?? "cus_later", card: ctx.card ?? TEST_CARD } },
    ];
  };
}

/**
 * A state's identity for path enumeration: status plus everything the candidate events' payloads
 * and guards depend on. (Paths are then re-folded from their events, so the record compared at
 * each step is the state this very path reached.)
 */
export function serializeState(snapshot: PaymentSnapshot): string {
  const c = snapshot.context;
  return [
    snapshot.value,
    c.intent?.external_transaction_id ?? "-",
    c.terminal?.terminal_type ?? "-",
    c.card ? "card" : "-",
    c.saved_card ? "saved" : "-",
    c.amount_captured,
    c.amount_refunded,
    c.last_error_code ?? "-",
  ].join("|");
}

/**
 * The automatic-capture pass-through (pmr --PaymentAuthorized--> requires_capture, then the
 * engine captures at once) is one command in the engine, not two steps: walk it through the
 * manual variants (the same transition) and the flow tests.
 */
function walkable(snapshot: PaymentSnapshot, event: PaymentEvent): boolean {
  if (applyPaymentEvent(snapshot, event) === null) return false;
  const intent = snapshot.context.intent;
  return !(event.type === "PaymentAuthorized" && snapshot.value === "payment_method_requested" && intent?.capture_method === "automatic");
}

export function simplePaths(world: World) {
  return getSimplePaths(paymentMachine, {
    events: candidateEvents(world),
    filterEvents: walkable,
    serializeState: (s) => serializeState(s as PaymentSnapshot),
    serializeEvent: (e) => JSON.stringify(e),
  });
}

/** Makes the engine take one step of a path; returns the payment id (set by the first step). */
export async function drive(
  engine: Engine,
  scripted: ScriptedProcessors,
  world: World,
  before: PaymentSnapshot,
  event: PaymentEvent,
  payment: { id: string; account: string; client_secret: string | null },
): Promise<void> {
  const ref = { external_account_id: payment.account, payment_id: payment.id };
  const status = before.value;
  const onTerminalA = status === "payment_method_requested" && before.context.terminal?.terminal_type === "A_async";
  switch (event.type) {
    case "PaymentIntentCreated": {
      const v = VARIANTS[event.data.external_transaction_id as Variant];
      const created = await engine.createIntent({
        external_account_id: v.account,
        amount: AMOUNT,
        payment_method_types: v.payment_method_types,
        capture_method: v.capture_method,
        external_payment_id: event.data.external_transaction_id!,
        ...(v.customer ? { external_customer_id: v.customer } : {}),
        ...(v.pm ? { payment_method_id: v.pm } : {}),
        ...(v.saving ? { allow_saving_card: true } : {}),
      });
      Object.assign(payment, { id: created.payment_id, account: v.account, client_secret: created.client_secret });
      return;
    }
    case "TerminalAuthorizationStarted":
      await engine.authorize({ ...ref, terminal_id: world[payment.account]!.asyncTerminal });
      return;
    case "PaymentMethodCollected":
      await engine.collectPaymentMethod({ client_secret: payment.client_secret!, ...(event.data.terminal_id ? { terminal_id: world[payment.account]!.reader } : {}) });
      return;
    case "PaymentAuthorized":
    case "AuthorizationFailed":
    case "CaptureRequested":
    case "PaymentCaptured": {
      if (status === "requires_capture") {
        scripted.nextCapture = event.type === "PaymentCaptured" ? "captured" : "capture_requested";
        await engine.capture({ ...ref, amount: (event as PaymentEventOf<"CaptureRequested">).data.amount });
        return;
      }
      if (status === "capture_requested") {
        await scripted.report(payment.id, { kind: "capture_settled", amount: (event as PaymentEventOf<"PaymentCaptured">).data.amount });
        return;
      }
      const outcome =
        event.type === "AuthorizationFailed"
          ? ({ kind: "failed", ...event.data } as const)
          : event.type === "PaymentAuthorized"
            ? ({ kind: "authorized", authorization: event.data } as const)
            : ({ kind: event.type === "PaymentCaptured" ? "captured" : "capture_requested", authorization: event.data.authorization! } as const);
      if (onTerminalA) {
        await scripted.report(payment.id, outcome);
        return;
      }
      scripted.nextAuthorization = outcome;
      await engine.authorize(ref);
      return;
    }
    case "PaymentCanceled":
      await engine.cancel({ ...ref, cancellation_reason: event.data.cancellation_reason ?? undefined });
      return;
    case "PaymentRefunded":
      await engine.refund({ ...ref, amount: event.data.amount });
      return;
    case "CardSaved":
      scripted.nextPaymentMethodId = event.data.payment_method_id;
      await engine.saveCard({ ...ref, external_customer_id: event.data.external_customer_id });
      return;
  }
}
