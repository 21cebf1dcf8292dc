// Folding payment events through the machine, purely: the one way cardflow turns a stream into
// a state, used alike by the engine, the projections and replay.
import { initialTransition, transition, type SnapshotFrom } from "xstate";
import type { PaymentEvent } from "./events.js";
import { paymentMachine, type PaymentContext, type PaymentStatus } from "./payment.js";

export type PaymentSnapshot = SnapshotFrom<typeof paymentMachine>;

/** The serializable state of a payment: what replay compares byte for byte. */
export interface PaymentState {
  status: PaymentStatus | "none";
  context: PaymentContext;
}

const [initial] = initialTransition(paymentMachine);
export const initialPaymentSnapshot: PaymentSnapshot = initial;

/**
 * The snapshot after the event, or null when the machine does not allow it (no enabled
 * transition: XState returns the same snapshot).
 */
export function applyPaymentEvent(snapshot: PaymentSnapshot, event: PaymentEvent): PaymentSnapshot | null {
  const [next] = transition(paymentMachine, snapshot, event);
  return next === snapshot ? null : next;
}

export function stateOf(snapshot: PaymentSnapshot): PaymentState {
  return { status: snapshot.value as PaymentState["status"], context: snapshot.context };
}

/** Rebuilds a snapshot from its serializable state (a cache or read model that stored it). */
export function snapshotOf(state: PaymentState): PaymentSnapshot {
  return paymentMachine.resolveState({ value: state.status, context: state.context });
}

/** Event types the current status has transitions for (guards aside): from the machine's definition. */
export function acceptedEventTypes(status: PaymentState["status"]): PaymentEvent["type"][] {
  const on = paymentMachine.config.states?.[status]?.on ?? {};
  return Object.keys(on) as PaymentEvent["type"][];
}

/**
 * One stored event applied to a payment's state (undefined before its first event). Throws when
 * the machine does not allow it: the engine appends only allowed events, so this is corruption.
 */
export function foldStored(
  state: PaymentState | undefined,
  event: { type: string; stream: string; revision: number },
): { before: PaymentState["status"]; state: PaymentState } {
  const before = state ? snapshotOf(state) : initialPaymentSnapshot;
  const after = applyPaymentEvent(before, event as unknown as PaymentEvent);
  if (!after) throw new Error(`${event.type} is not allowed after ${String(before.value)} (${event.stream}@${event.revision})`);
  return { before: before.value as PaymentState["status"], state: stateOf(after) };
}
