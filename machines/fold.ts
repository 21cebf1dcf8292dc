// Folding payment events through the machine, purely: the one way cardflow turns a stream into
// a state, used alike by the engine, the projections and replay. The fold runs on the transition
// table compiled from the machine (./compiled.ts, proven equal to XState's transition() by
// test/machines/compiled.test.ts): the machine stays the source of truth, without XState building
// an actor scope per event.
import { compileMachine, type CompiledState } from "./compiled.js";
import type { PaymentEvent } from "./events.js";
import { paymentMachine, type FollowUpRule, type PaymentContext, type PaymentStatus } from "./payment.js";

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

/** A stored event the machine does not allow after the payment's state: a store that holds it is corrupt (`cardflow audit` explains it). */
export class TransitionRefused extends Error {
  constructor(
    readonly type: string,
    readonly status: string,
    readonly stream: string,
    readonly revision: number,
  ) {
    super(`${type} is not allowed after ${status} (${stream}@${revision})`);
    this.name = "TransitionRefused";
  }
}

/**
 * A stored event applied to a payment's snapshot: the one fold of a payment stream, for the
 * engine's loads, the read models and the public events alike. Throws when the machine does not
 * allow it: the engine appends only allowed events, so this is corruption.
 */
export function applyStored(snapshot: PaymentSnapshot, event: { type: string; stream: string; revision: number }): PaymentSnapshot {
  const after = applyPaymentEvent(snapshot, event as unknown as PaymentEvent);
  if (!after) throw new TransitionRefused(event.type, String(snapshot.value), event.stream, event.revision);
  return after;
}

/**
 * The payment state after each event today's machine refuses but the earlier machine that decided it
 * allowed, by the event's global position: the state that machine gave (src/audit/machine-history.ts),
 * what the service's read models folded when it appended the event. The audit's folds take it.
 */
export type AsAllowed = ReadonlyMap<number, PaymentState>;

/** One stored event applied to a payment's state (undefined before its first event), as applyStored. */
export function foldStored(
  state: PaymentState | undefined,
  event: { type: string; stream: string; revision: number },
): { before: PaymentState["status"]; state: PaymentState } {
  const before = state ? snapshotOf(state) : initialPaymentSnapshot;
  return { before: before.value, state: stateOf(applyStored(before, event)) };
}

/** Whether the machine tags the snapshot's state so (tags live on the machine's state nodes). */
export function hasTag(snapshot: PaymentSnapshot, tag: "awaiting_processor" | "collecting_card"): boolean {
  return paymentMachine.root.states[snapshot.value]?.tags.includes(tag) ?? false;
}

/** Guards that read the payment's context only (no event): asked of the machine by name. */
export type ContextGuard = "isStoredCard" | "isCardPresent" | "hasCollectedCard" | "isManualCapture" | "isAutomaticCapture" | "savesCardOnTerminal";

type GuardFunction = (args: { context: PaymentContext; event: undefined }, params: undefined) => boolean;

/** Whether the machine's named guard holds for the payment (its own implementation: no copy of the rule). */
export function guardHolds(snapshot: PaymentSnapshot, guard: ContextGuard): boolean {
  const implementation = (paymentMachine.implementations.guards as unknown as Record<string, GuardFunction>)[guard]!;
  return implementation({ context: snapshot.context, event: undefined }, undefined);
}

/** The steps that follow on their own in the snapshot's state (the state's meta): see FollowUpRule. */
export function followUpRules(snapshot: PaymentSnapshot): readonly FollowUpRule[] {
  const meta = paymentMachine.root.states[snapshot.value]?.meta as { followUps?: FollowUpRule[] } | undefined;
  return meta?.followUps ?? [];
}
