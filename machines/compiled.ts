// The payment machine compiled into a transition table for the hot path (engine loads,
// projections, replay). XState's pure transition() builds an actor scope and a full snapshot on
// every call; this table is derived once, at import, from the machine's own definition and
// implementations (its `on` maps, guards and assign actions), so the machine stays the single
// source of truth. test/machines/compiled.test.ts proves it equal to transition() on random
// event sequences. Anything the compiler does not understand is refused here, at import, rather
// than folded differently.
import { and, initialTransition, not, or, type AnyStateMachine } from "xstate";

/** What a fold needs between events: the state value and the context (no actor, no children). */
export interface CompiledState<C> {
  readonly value: string;
  readonly context: C;
}

/** The arguments XState gives guards and assigns; one object per step (young, so no write barrier), its context the step's copy once an assign ran. */
interface Args<C, E> {
  context: C;
  event: E;
}
type Check<C, E> = (args: Args<C, E>) => boolean;
/** Writes an assign's update into `args.context` (the step's own copy). */
type Update<C, E> = (args: Args<C, E>) => void;

interface Candidate<C, E> {
  target: string | null;
  guard: Check<C, E> | null;
  actions: Update<C, E>[];
}

export interface CompiledMachine<C, E extends { type: string }> {
  initial: CompiledState<C>;
  /** The state after the event, or null when no transition is enabled (XState keeps its snapshot). */
  step(state: CompiledState<C>, event: E): CompiledState<C> | null;
  /** Event types each state has transitions for (guards aside). */
  accepted(value: string): string[];
}

// built-in combinators are recognised by their check function, not by name
const checkOf = (guard: unknown) => (guard as { check: unknown }).check;
const AND = checkOf(and([]));
const OR = checkOf(or([]));
const NOT = checkOf(not("x"));

export function compileMachine<C extends object, E extends { type: string }>(machine: AnyStateMachine): CompiledMachine<C, E> {
  const root = machine.root;
  const { guards, actions } = machine.implementations as { guards: Record<string, unknown>; actions: Record<string, unknown> };
  const unsupported = (what: string): never => {
    throw new Error(`machines/compiled.ts cannot compile ${what} of machine ${machine.id}; extend the compiler (and its property test)`);
  };

  if (root.transitions.size || root.always?.length || root.entry.length || root.exit.length) unsupported("root transitions or actions");

  function compileGuard(guard: unknown): Check<C, E> {
    if (typeof guard === "string") {
      if (!(guard in guards)) unsupported(`unknown guard '${guard}'`);
      return compileGuard(guards[guard]);
    }
    if (typeof guard !== "function") return unsupported("a parameterized guard");
    const g = guard as { check?: unknown; guards?: unknown[] } & ((args: Args<C, E>, params: undefined) => boolean);
    // a guard of setup() is called as XState calls it, (args, params), params undefined: as is
    if (!("check" in g)) return g as Check<C, E>;
    const parts = (g.guards ?? []).map(compileGuard);
    if (g.check === AND) {
      // the machine's and() guards have two or three parts: unrolled, no loop per event
      const [p0, p1, p2] = parts;
      if (parts.length === 2) return (args) => p0!(args) && p1!(args);
      if (parts.length === 3) return (args) => p0!(args) && p1!(args) && p2!(args);
      return (args) => {
        for (const p of parts) if (!p(args)) return false;
        return true;
      };
    }
    if (g.check === OR) {
      return (args) => {
        for (const p of parts) if (p(args)) return true;
        return false;
      };
    }
    if (g.check === NOT) return (args) => !parts[0]!(args);
    return unsupported("a built-in guard other than and/or/not");
  }

  /**
   * An assign action as an update of the step's fresh context (`args.context`, a copy the step
   * owns): XState's resolveAssign merges the action's partial object into the context, later
   * keys over earlier ones, which is what Object.assign onto the copy does.
   */
  function compileAction(action: unknown): Update<C, E> {
    if (typeof action === "string") {
      if (!(action in actions)) unsupported(`unknown action '${action}'`);
      return compileAction(actions[action]);
    }
    const a = action as { type?: string; assignment?: unknown };
    if (typeof action !== "function" || a.type !== "xstate.assign") return unsupported("an action other than assign");
    const assignment = a.assignment;
    if (typeof assignment === "function") return (args) => void Object.assign(args.context, assignment(args, undefined));
    const entries = Object.entries(assignment as Record<string, unknown>);
    // constant values (like `assign({ attempt: null })`): written straight into the copy
    if (entries.every(([, value]) => typeof value !== "function")) {
      return (args) => {
        const context = args.context as Record<string, unknown>;
        for (const [key, value] of entries) context[key] = value;
      };
    }
    // property assigners all see the context before this action, as in XState
    return (args) => {
      const partial: Record<string, unknown> = {};
      for (const [key, value] of entries) partial[key] = typeof value === "function" ? value(args, undefined) : value;
      Object.assign(args.context, partial);
    };
  }

  const table = new Map<string, Map<string, Candidate<C, E>[]>>();
  for (const [value, node] of Object.entries(root.states)) {
    if (node.type !== "atomic" && node.type !== "final") unsupported(`nested state '${value}'`);
    if (node.entry.length || node.exit.length || node.always?.length || node.invoke.length || node.after.length) {
      unsupported(`entry/exit/always/invoke/after in state '${value}'`);
    }
    const byEvent = new Map<string, Candidate<C, E>[]>();
    // a final state takes no events: XState keeps a done snapshot as it is
    if (node.type !== "final") {
      for (const [eventType, transitions] of node.transitions) {
        if (eventType.includes("*")) unsupported(`wildcard event '${eventType}'`);
        byEvent.set(
          eventType,
          transitions.map((t) => {
            if (t.target && (t.target.length !== 1 || t.target[0]!.parent !== root)) unsupported(`a transition to a nested or multiple target from '${value}'`);
            return {
              target: t.target ? t.target[0]!.key : null,
              guard: t.guard === undefined ? null : compileGuard(t.guard),
              actions: t.actions.map(compileAction),
            };
          }),
        );
      }
    }
    table.set(value, byEvent);
  }

  const [first] = initialTransition(machine);
  if (typeof first.value !== "string") unsupported("a non-string initial state");

  return {
    initial: { value: first.value as string, context: first.context as C },
    step(state, event) {
      const candidates = table.get(state.value)?.get(event.type);
      if (!candidates) return null;
      const args: Args<C, E> = { context: state.context, event };
      for (const candidate of candidates) {
        if (candidate.guard && !candidate.guard(args)) continue;
        // XState's resolveAssign: each assign sees the context the previous one left, merged into a
        // fresh object with the old keys first. One copy per step is enough (states are
        // immutable): a spread keeps the context's shape, where Object.assign({}, ...) rebuilds it.
        if (candidate.actions.length) {
          args.context = { ...state.context };
          for (const update of candidate.actions) update(args);
        }
        return { value: candidate.target ?? state.value, context: args.context };
      }
      return null;
    },
    accepted: (value) => [...(table.get(value)?.keys() ?? [])],
  };
}
