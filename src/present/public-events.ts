// Public events: what a merchant is told happened (webhooks, the event feed), mapped from the domain events. A payment's
// public type is read from how its record changed (status, refunded amount, card on file), not
// from the domain event's name, so internal events that change nothing a merchant sees (attempt
// markers, say) map to nothing and new ones need no mapping.
import { PaymentEvent } from "../../machines/events.js";
import { foldStored, type AsAllowed, type PaymentState } from "../../machines/fold.js";
import { customerCardsProjection } from "../../projections/customer-cards.js";
import { terminalsProjection } from "../../projections/terminals.js";
import { presentPayment } from "./api-versions.js";
import { paymentRecord, type PaymentRecord } from "./payment-record.js";
import type { PublicEventType } from "./public-event-types.js";
import { recordRulesOf } from "../events/envelope.js";
import type { RecordedEvent } from "../store/port.js";

export { PUBLIC_EVENT_TYPES, type PublicEventType } from "./public-event-types.js";

export interface PublicEvent {
  /** Stable: derived from the domain event's id, so a redelivery or a rebuilt feed has the same id. */
  id: string;
  object: "event";
  type: PublicEventType;
  /** When it happened (the domain event's time, ISO 8601). */
  created: string;
  external_account_id: string;
  /** The payment it is about (null for a terminal). */
  payment_id: string | null;
  /** 1, 2, 3 … per payment (per terminal): the order a receiver applies them in. */
  sequence: number;
  /** The API request that caused it. */
  request_id: number;
  /** The object as it stood right after: a payment as the v2 status read presents it, a card on file, a terminal. */
  data: { object: unknown };
}

/** What a stream's next public event is derived from. */
export interface StreamFold {
  account: string;
  /** Public events of the stream so far. */
  sequence: number;
  payment?: PaymentState;
}

const STATUS_TYPES: Partial<Record<PaymentRecord["status"], PublicEventType>> = {
  payment_method_requested: "payment_intent.payment_method_requested",
  requires_capture: "payment_intent.requires_capture",
  capture_requested: "payment_intent.capture_requested",
  succeeded: "payment_intent.succeeded",
  canceled: "payment_intent.canceled",
  error: "payment_intent.payment_failed",
};

/** The public type of a change of a payment record; null when nothing a merchant sees changed. */
export function paymentEventType(before: PaymentRecord | undefined, after: PaymentRecord): PublicEventType | null {
  if (!before) return "payment_intent.created";
  if (after.status !== before.status) {
    // a retryable failure goes back to requires_payment_method with last_error set
    if (after.status === "requires_payment_method") return after.last_error !== undefined ? "payment_intent.payment_failed" : null;
    return STATUS_TYPES[after.status] ?? null;
  }
  if (after.amount_refunded !== before.amount_refunded) return "payment_intent.refunded";
  if (after.payment_method_id !== before.payment_method_id && after.external_customer_id !== null) return "customer_card.saved";
  // a stored-card retryable failure stays in requires_payment_method: a new error is the change
  if (after.last_error !== undefined && (after.last_error !== before.last_error || after.last_error_code !== before.last_error_code)) return "payment_intent.payment_failed";
  return null;
}

/** The events the payment machine folds; any other event on a payment stream is not the merchant's business. */
const MACHINE_EVENTS = new Set<string>(PaymentEvent.options.map((o) => o.shape.type.value));

export const publicEventId = (domainEventId: string) => `evt_${domainEventId.replaceAll("-", "")}`;

/**
 * One stored event folded into its stream's state; the public event it makes, if any. Pure: the
 * feed, its rebuild and every process derive the same events, ids and sequences.
 */
export function publicEventOf(fold: StreamFold | undefined, e: RecordedEvent, asAllowed?: AsAllowed): { fold: StreamFold; event: PublicEvent | null } | null {
  const make = (account: string, type: PublicEventType | null, payment_id: string | null, object: () => unknown, payment?: PaymentState) => {
    const sequence = (fold?.sequence ?? 0) + (type ? 1 : 0);
    const next: StreamFold = { account, sequence, ...(payment ? { payment } : {}) };
    if (!type) return { fold: next, event: null };
    const event: PublicEvent = {
      id: publicEventId(e.id),
      object: "event",
      type,
      created: e.metadata.timestamp,
      external_account_id: account,
      payment_id,
      sequence,
      request_id: e.metadata.request_id,
      data: { object: object() },
    };
    return { fold: next, event };
  };
  if (e.stream.startsWith("payment-")) {
    if (!MACHINE_EVENTS.has(e.type)) return fold ? { fold, event: null } : null;
    // an audit's fold: an event only the earlier machine that decided it allowed, as it folded it
    const state = asAllowed?.get(e.position) ?? foldStored(fold?.payment, e).state;
    // by the rules of the event's time: a published payload never changes after an upgrade
    const rules = recordRulesOf(e);
    const before = fold?.payment ? paymentRecord(fold.payment, 0, rules) : undefined;
    const after = paymentRecord(state, e.metadata.request_id, rules);
    const type = paymentEventType(before, after);
    const object = () => (type === "customer_card.saved" && e.type === "CardSaved" ? customerCardsProjection.apply(undefined, e) : presentPayment(after, "v2"));
    return make(after.external_account_id, type, after.payment_id, object, state);
  }
  if (e.type === "TerminalRegistered") {
    const terminal = terminalsProjection.apply(undefined, e);
    return make(terminal.external_account_id, "terminal.registered", null, () => terminal);
  }
  return null;
}
