// Folding payment events through the machine, purely: the one way cardflow turns a stream into
// a state, used alike by the engine, the projections and replay. The fold runs on the transition
// table compiled from the machine (./compiled.ts, proven equal to XState's transition() by
// test/machines/compiled.test.ts): the machine stays the source of truth, without XState building
// an actor scope per event.
import { compileMachine, type CompiledState } from "./compiled.js";
import type { PaymentEvent } from "./events.js";
import { paymentMachine, type PaymentContext, type PaymentStatus } from "./payment.js";

/**
 * A payment between events: the machine's state value and context, as XState's snapshot carries
 * them (`snapshot.value`, `snapshot.context`), without the actor around them.
 */
export interface PaymentSnapshot extends CompiledState<PaymentContext> {
  readonly value: PaymentStatus | "none";
}

/** The serializable state of a payment: what replay compares byte for byte. */
export interface PaymentState {
  status: PaymentStatus | "none";
  context: PaymentContext;
}

const compiled = compileMachine<PaymentContext, PaymentEvent>(paymentMachine);
export const initialPaymentSnapshot = compiled.initial as PaymentSnapshot;

/** The snapshot after the event, or null when the machine does not allow it (no enabled transition). */
export function applyPaymentEvent(snapshot: PaymentSnapshot, event: PaymentEvent): PaymentSnapshot | null {
  return compiled.step(snapshot, event) as PaymentSnapshot | null;
}

export function stateOf(snapshot: PaymentSnapshot): PaymentState {
  return { status: snapshot.value, context: snapshot.context };
}

/** Rebuilds a snapshot from its serializable state (a cache or read model that stored it). */
export function snapshotOf(state: PaymentState): PaymentSnapshot {
  return { value: state.status, context: state.context };
}

/** Event types the current status has transitions for (guards aside): from the machine's definition. */
export function acceptedEventTypes(status: PaymentState["status"]): PaymentEvent["type"][] {
  return compiled.accepted(status) as PaymentEvent["type"][];
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
  if (!after) throw new Error(`${event.type} is not allowed after ${before.value} (${event.stream}@${event.revision})`);
  return { before: before.value, state: stateOf(after) };
}

/** Whether the machine tags the snapshot's state so (tags live on the machine's state nodes). */
export function hasTag(snapshot: PaymentSnapshot, tag: "awaiting_processor" | "collecting_card"): boolean {
  return paymentMachine.root.states[snapshot.value]?.tags.includes(tag) ?? false;
}
