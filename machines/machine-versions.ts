// Machines of earlier versions, rebuilt from their canonical definitions (docs/machines/<hash>.json,
// machines/definition.ts) with today's guard and action implementations, named as the definition
// names them; and why today's machine refuses an event (no transition, or which guards failed).
// An audit uses both: an event today's machine refuses may have been allowed by the machine that
// decided it, and a refusal names the rule that refused it.
import { and, assign, setup, type AnyStateMachine } from "xstate";
import { compileMachine, type CompiledMachine } from "./compiled.js";
import { machineDefinition, type MachineDefinition } from "./definition.js";
import type { PaymentEvent } from "./events.js";
import type { PaymentSnapshot } from "./fold.js";
import { initialPaymentContext, paymentMachine, type PaymentContext } from "./payment.js";

type Implementations = { guards: Record<string, (args: { context: PaymentContext; event: PaymentEvent }, params: undefined) => boolean>; actions: Record<string, unknown> };
const today = paymentMachine.implementations as unknown as Implementations;

export interface RebuiltMachine {
  step(snapshot: PaymentSnapshot, event: PaymentEvent): PaymentSnapshot | null;
  /** Guards the definition names that today's machine no longer has: taken to have held (the machine that had them decided). */
  guardsAssumed: string[];
  /** Actions it names that today's machine no longer has: not applied (the context may differ from what that machine kept). */
  actionsSkipped: string[];
}

/** The machine a definition describes, with today's implementations of the guards and actions it names. */
export function rebuildMachine(definition: MachineDefinition): RebuiltMachine {
  const guardsAssumed = definition.guards.filter((g) => !(g in today.guards));
  const actionsSkipped = definition.actions.filter((a) => !(a in today.actions));
  const states: Record<string, { type?: "final"; tags?: string[]; on?: Record<string, unknown[]> }> = {};
  for (const s of definition.states) states[s.id] = { ...(s.final ? { type: "final" as const } : {}), tags: s.tags, on: {} };
  for (const t of definition.transitions) {
    const on = states[t.source]!.on!;
    const guard = t.guards.length === 0 ? undefined : t.guards.length === 1 ? t.guards[0] : and(t.guards);
    (on[t.event] ??= []).push({ ...(t.target !== t.source ? { target: t.target } : {}), ...(guard ? { guard } : {}), actions: t.actions });
  }
  const machine = setup({
    types: { context: {} as PaymentContext, events: {} as PaymentEvent },
    guards: { ...today.guards, ...Object.fromEntries(guardsAssumed.map((g) => [g, () => true])) } as never,
    actions: { ...today.actions, ...Object.fromEntries(actionsSkipped.map((a) => [a, assign({})])) } as never,
  }).createMachine({ id: definition.id, initial: definition.initial, context: initialPaymentContext, states: states as never });
  const compiled: CompiledMachine<PaymentContext, PaymentEvent> = compileMachine(machine as unknown as AnyStateMachine);
  return { step: (snapshot, event) => compiled.step(snapshot, event) as PaymentSnapshot | null, guardsAssumed, actionsSkipped };
}

export type Refusal =
  | { kind: "illegal_transition"; guards: []; message: string }
  | { kind: "guard_failed"; /** the first guard that failed, for each candidate transition in the order the machine tries them */ guards: string[]; message: string };

const current = machineDefinition();

/** Why today's machine refuses the event in this snapshot: no transition for it, or the guards that failed. */
export function refusalOf(snapshot: PaymentSnapshot, event: PaymentEvent): Refusal {
  const candidates = current.transitions.filter((t) => t.source === snapshot.value && t.event === event.type);
  if (candidates.length === 0) return { kind: "illegal_transition", guards: [], message: `no transition for ${event.type} in ${snapshot.value}` };
  const failed = candidates.map((t) => t.guards.find((g) => !holds(g, snapshot.context, event)) ?? null);
  const guards = [...new Set(failed.filter((g): g is string => g !== null))];
  const to = (i: number) => (candidates[i]!.target === snapshot.value ? "" : ` (→ ${candidates[i]!.target})`);
  return { kind: "guard_failed", guards, message: `guard ${failed.map((g, i) => `${g ?? "?"}${to(i)}`).join(", ")} failed in ${snapshot.value}` };
}

function holds(guard: string, context: PaymentContext, event: PaymentEvent): boolean {
  try {
    return today.guards[guard]!({ context, event }, undefined);
  } catch {
    return false;
  }
}
