// The machine's transitions, read from its definition: the list that coverage, diagrams and
// reviews count from (never a hand-kept copy).
import { paymentMachine } from "./payment.js";

export interface MachineTransition {
  /** `${source} --${event}--> ${target}`: unique per transition of this machine. */
  id: string;
  source: string;
  event: string;
  /** Equal to source for a self-transition (targetless: stays, actions run). */
  target: string;
  /** Guard names, all of which must hold; empty when unguarded (a fallback candidate). */
  guards: string[];
}

type GuardDef = string | { type?: string; guards?: GuardDef[] } | ((...args: never[]) => unknown) | undefined;

function guardNames(guard: GuardDef): string[] {
  if (!guard) return [];
  if (typeof guard === "string") return [guard];
  const nested = (guard as { guards?: GuardDef[] }).guards;
  if (nested) return nested.flatMap(guardNames);
  return [(guard as { type?: string }).type ?? "guard"];
}

export function machineTransitions(): MachineTransition[] {
  const out: MachineTransition[] = [];
  for (const [source, node] of Object.entries(paymentMachine.root.states)) {
    for (const [event, candidates] of node.transitions) {
      for (const t of candidates) {
        const target = t.target?.[0]?.key ?? source;
        out.push({ id: `${source} --${event}--> ${target}`, source, event, target, guards: guardNames(t.guard as GuardDef) });
      }
    }
  }
  return out;
}

export const machineStates = (): string[] => Object.keys(paymentMachine.root.states);
export const finalStates = (): string[] =>
  Object.entries(paymentMachine.root.states).filter(([, n]) => n.type === "final").map(([k]) => k);
