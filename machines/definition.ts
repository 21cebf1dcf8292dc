// The machine's definition as canonical data: states, events (with their schema versions),
// guards, actions, transitions and final states, read from the XState machine itself. It is what
// `cardflow machine export` prints and docs/machine.json holds (reviews diff it), and its short
// hash names the machine version that decided an event (old definitions: docs/machines/<hash>.json).
// Canonical: states, events, guards and actions sorted by name; transitions sorted by source state
// and event, the candidates of one event kept in the order the machine tries them (the first whose
// guards hold is taken). Guards are named, not their code: a guard whose meaning changes gets a
// new name, or the change shows only in the code review of machines/payment.ts.
import { createHash } from "node:crypto";
import { PaymentEvent } from "./events.js";
import { paymentMachine, type FollowUpRule } from "./payment.js";
import { finalStates, machineTransitions } from "./transitions.js";

export const MACHINE_FORMAT = "cardflow.machine/1";

export interface MachineDefinitionTransition {
  source: string;
  event: string;
  /** Equal to source for a transition that keeps the state (actions only). */
  target: string;
  /** All must hold; empty: unguarded. */
  guards: string[];
  actions: string[];
}

export interface MachineDefinition {
  format: typeof MACHINE_FORMAT;
  id: string;
  initial: string;
  /** follow_ups: what follows on its own in the state, when its guards hold (the engine's policy makes it); absent in definitions from before follow-ups were listed. */
  states: { id: string; final: boolean; tags: string[]; follow_ups?: { command: string; guards: string[] }[] }[];
  final_states: string[];
  /** The domain events the machine folds, each with the schema version it reads. */
  events: { type: string; version: number }[];
  guards: string[];
  actions: string[];
  transitions: MachineDefinitionTransition[];
}

type ActionDef = string | { type?: string } | ((...args: never[]) => unknown);
const actionName = (a: ActionDef): string => (typeof a === "string" ? a : typeof a === "function" ? a.name || "inline" : (a.type ?? "inline"));

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A state's follow-up rules (its meta, machines/payment.ts), in the order the machine lists them. */
const followUpsOf = (meta: unknown) => ((meta as { followUps?: FollowUpRule[] } | undefined)?.followUps ?? []).map(({ command, guard }) => ({ command, guards: [guard] }));

export function machineDefinition(): MachineDefinition {
  const root = paymentMachine.root;
  const initial = root.initial?.target?.[0]?.key;
  if (!initial) throw new Error("the machine has no initial state");
  const finals = new Set(finalStates());
  const states = Object.entries(root.states)
    .map(([id, node]) => ({ id, final: finals.has(id), tags: [...node.tags].sort(byName), follow_ups: followUpsOf(node.meta) }))
    .sort((a, b) => byName(a.id, b.id));

  // machineTransitions() walks the machine in its order; the actions come from the same walk
  const actions: string[][] = [];
  for (const node of Object.values(root.states)) for (const candidates of node.transitions.values()) for (const t of candidates) actions.push((t.actions as ActionDef[]).map(actionName));
  const transitions = machineTransitions()
    .map(({ source, event, target, guards }, i) => ({ source, event, target, guards, actions: actions[i]! }))
    // stable: the candidates of one event keep their order
    .sort((a, b) => byName(a.source, b.source) || byName(a.event, b.event));

  const events = PaymentEvent.options.map((schema) => ({ type: schema.shape.type.value as string, version: schema.shape.version.value as number })).sort((a, b) => byName(a.type, b.type));
  const implementations = paymentMachine.implementations as { guards: Record<string, unknown>; actions: Record<string, unknown> };
  return {
    format: MACHINE_FORMAT,
    id: paymentMachine.id,
    initial,
    states,
    final_states: states.filter((s) => s.final).map((s) => s.id),
    events,
    guards: Object.keys(implementations.guards).sort(byName),
    actions: Object.keys(implementations.actions).sort(byName),
    transitions,
  };
}

/**
 * The definition as written to docs/machine.json and printed by `cardflow machine export`: one
 * field per line, and each state, event and transition on a line of its own, so that a change to
 * the machine is a change of the lines it touches in a pull request's diff.
 */
export function machineJson(definition: MachineDefinition = machineDefinition()): string {
  const fields = Object.entries(definition).map(([key, value]) => {
    const items = Array.isArray(value) && value.some((v) => typeof v === "object") ? `[\n${value.map((v) => `    ${JSON.stringify(v)}`).join(",\n")}\n  ]` : JSON.stringify(value);
    return `  ${JSON.stringify(key)}: ${items}`;
  });
  return `{\n${fields.join(",\n")}\n}\n`;
}

/** The machine version: the first 12 hex digits of the SHA-256 of its canonical JSON (compact, fields in the order above). */
export const machineHash = (definition: MachineDefinition = machineDefinition()): string =>
  createHash("sha256").update(JSON.stringify(definition)).digest("hex").slice(0, 12);

/** The version of the machine this code runs: recorded in the metadata of every event it appends (`machine_version`). */
export const MACHINE_VERSION = machineHash();
