// The transition-table compiler (machines/compiled.ts) on small machines, one construct at a time:
// what it supports folds exactly as XState's pure transition() does (the reference), and what it
// does not support is refused when compiling, naming the construct, rather than folded
// differently. test/machines/compiled.test.ts checks the payment machine itself on random
// sequences; this file is fast enough for the mutation run (vitest.mutation.config.ts).
import { describe, expect, test } from "vitest";
import { and, assign, fromPromise, initialTransition, log, not, or, setup, stateIn, transition, type AnyStateMachine } from "xstate";
import { compileMachine } from "../../machines/compiled.js";

type Ctx = { n: number; log: string[] };
type Ev = { type: "go" | "stop" | "other"; by?: number };

const base = setup({
  types: { context: {} as Ctx, events: {} as Ev },
  guards: {
    isBig: ({ context }) => context.n >= 3,
    isOdd: ({ context }) => context.n % 2 === 1,
    byTwo: ({ event }) => event.by === 2,
  },
  actions: {
    // object form: a function value is called, a constant is copied
    inc: assign({ n: ({ context, event }) => context.n + (event.by ?? 1) }),
    mark: assign({ log: ["marked"] }),
    // function form; each assign sees the context the one before it left
    note: assign(({ context }) => ({ log: [...context.log, `n=${context.n}`] })),
    tell: () => undefined,
  },
});
const start: Ctx = { n: 0, log: [] };

/** Folds the events with the compiled table and with XState's transition(); both give the same states, contexts and refusals. */
function sameAsXState(machine: AnyStateMachine, events: Ev[]) {
  const compiled = compileMachine<Ctx, Ev>(machine);
  let reference = initialTransition(machine)[0];
  let state = compiled.initial;
  expect([state.value, state.context]).toEqual([reference.value, reference.context]);
  const trace: { value: string; context: Ctx; allowed: boolean }[] = [];
  for (const event of events) {
    const [next] = transition(machine, reference, event);
    const allowed = next !== reference;
    reference = next;
    const step = compiled.step(state, event);
    expect(step !== null).toBe(allowed);
    if (step) state = step;
    expect([state.value, state.context]).toEqual([reference.value, reference.context]);
    trace.push({ value: state.value, context: state.context, allowed });
  }
  return trace;
}

describe("what the compiler folds as XState does", () => {
  test("given object-form and function-form assigns, when they run in sequence, then each sees the context the one before left", () => {
    const machine = base.createMachine({ context: start, initial: "a", states: { a: { on: { go: { actions: ["inc", "note", "mark", "note"] } } } } });
    const trace = sameAsXState(machine, [{ type: "go" }, { type: "go", by: 5 }]);
    expect(trace.map((t) => t.context)).toEqual([
      { n: 1, log: ["marked", "n=1"] },
      { n: 6, log: ["marked", "n=6"] },
    ]);
  });

  test("given guarded candidates, when an event comes, then the first whose guard holds is taken and none holding refuses it", () => {
    const machine = base.createMachine({
      context: start,
      initial: "a",
      states: {
        a: { on: { go: [{ target: "big", guard: "isBig" }, { actions: "inc", guard: ({ context }) => context.n < 4 }] } },
        big: { on: { stop: "done" } },
        done: { type: "final" },
      },
    });
    const trace = sameAsXState(machine, [{ type: "go" }, { type: "stop" }, { type: "go" }, { type: "go" }, { type: "go" }, { type: "other" }, { type: "stop" }, { type: "go" }]);
    expect(trace.map((t) => `${t.value}:${t.context.n}:${t.allowed}`)).toEqual([
      "a:1:true", "a:1:false", "a:2:true", "a:3:true", "big:3:true", "big:3:false", "done:3:true", "done:3:false",
    ]);
  });

  test("given and, or and not guards, when they are combined, then each decides as XState's does", () => {
    const machine = base.createMachine({
      context: start,
      initial: "a",
      states: {
        a: {
          on: {
            go: [
              { target: "both", guard: and(["isBig", "isOdd"]) },
              { target: "either", guard: or(["byTwo", not("isOdd")]) },
              { actions: "inc" },
            ],
            other: { actions: "inc" },
          },
        },
        both: { on: { go: { target: "a", actions: assign({ n: 0 }) } } },
        either: { on: { go: { target: "a", guard: not("isBig") } } },
      },
    });
    const trace = sameAsXState(machine, [
      { type: "go" }, // n 0: not odd -> either
      { type: "go" }, // not big -> a
      { type: "other" }, // n 1
      { type: "go" }, // n 1: odd, not by two -> inc to 2
      { type: "other" }, // n 3
      { type: "go" }, // big and odd -> both
      { type: "go" }, // back to a, n 0
      { type: "other" }, { type: "other" }, { type: "other" }, { type: "other" }, // n 4
      { type: "go", by: 2 }, // even -> either
      { type: "go" }, // big: refused
    ]);
    expect(trace.map((t) => `${t.value}:${t.allowed}`)).toEqual([
      "either:true", "a:true", "a:true", "a:true", "a:true", "both:true", "a:true",
      "a:true", "a:true", "a:true", "a:true", "either:true", "either:false",
    ]);
  });

  test("given a state the machine does not have, then it takes no events and accepts none", () => {
    const compiled = compileMachine<Ctx, Ev>(base.createMachine({ context: start, initial: "a", states: { a: { on: { go: { actions: "inc" }, stop: {} } } } }));
    expect(compiled.accepted("a")).toEqual(["go", "stop"]);
    expect(compiled.accepted("zzz")).toEqual([]);
    expect(compiled.step({ value: "zzz", context: start }, { type: "go" })).toBeNull();
  });

  test("given a final state, then it accepts no events", () => {
    const compiled = compileMachine<Ctx, Ev>(base.createMachine({ context: start, initial: "a", states: { a: { on: { go: "end" } }, end: { type: "final" } } }));
    expect(compiled.accepted("end")).toEqual([]);
  });
});

describe("what the compiler refuses, naming it", () => {
  const refused = (config: object, why: RegExp) => {
    // the constructs below are what the compiler exists to refuse; XState's types are beside the point
    const machine = base.createMachine({ context: start, initial: "a", ...config } as never) as unknown as AnyStateMachine;
    expect(() => compileMachine(machine)).toThrow(why);
    expect(() => compileMachine(machine)).toThrow(/machines\/compiled\.ts cannot compile .* of machine \(machine\); extend the compiler/);
  };

  test.each([
    ["transitions on the root", { on: { go: ".a" }, states: { a: {} } }, /root transitions or actions/],
    ["always on the root", { always: { actions: "inc", guard: "isBig" }, states: { a: {} } }, /root transitions or actions/],
    ["entry on the root", { entry: "inc", states: { a: {} } }, /root transitions or actions/],
    ["exit on the root", { exit: "inc", states: { a: {} } }, /root transitions or actions/],
    ["an unknown guard", { states: { a: { on: { go: { guard: "nope" } } } } }, /unknown guard 'nope'/],
    ["a parameterized guard", { states: { a: { on: { go: { guard: { type: "isBig", params: { min: 1 } } } } } } }, /a parameterized guard/],
    ["a built-in guard other than and/or/not", { states: { a: { on: { go: { guard: stateIn("a") } } } } }, /a built-in guard other than and\/or\/not/],
    ["a guard nested in and", { states: { a: { on: { go: { guard: and(["isBig", "nope"]) } } } } }, /unknown guard 'nope'/],
    ["an unknown action", { states: { a: { on: { go: { actions: "nope" } } } } }, /unknown action 'nope'/],
    ["an action other than assign", { states: { a: { on: { go: { actions: "tell" } } } } }, /an action other than assign/],
    ["a built-in action other than assign", { states: { a: { on: { go: { actions: log("x") } } } } }, /an action other than assign/],
    ["a nested state", { states: { a: { initial: "b", states: { b: {} } } } }, /nested state 'a'/],
    ["entry in a state", { states: { a: { entry: "inc" } } }, /entry\/exit\/always\/invoke\/after in state 'a'/],
    ["exit in a state", { states: { a: { exit: "inc" } } }, /entry\/exit\/always\/invoke\/after in state 'a'/],
    ["always in a state", { states: { a: { always: { guard: "isBig", target: "b" } }, b: {} } }, /entry\/exit\/always\/invoke\/after in state 'a'/],
    ["invoke in a state", { states: { a: { invoke: { src: fromPromise(async () => 1) } } } }, /entry\/exit\/always\/invoke\/after in state 'a'/],
    ["after in a state", { states: { a: { after: { 100: "b" } }, b: {} } }, /entry\/exit\/always\/invoke\/after in state 'a'/],
    ["a wildcard event", { states: { a: { on: { "*": { actions: "inc" } } } } }, /wildcard event '\*'/],
    ["a transition into a nested state", { states: { a: { on: { go: "#deep" } }, b: { initial: "c", states: { c: { id: "deep" } } } } }, /a transition to a nested or multiple target from 'a'/],
    ["a parallel root (a non-string state value)", { type: "parallel", initial: undefined, states: { a: {}, b: {} } }, /a non-string initial state/],
  ])("given %s, when compiled, then it is refused", (_what, config, why) => refused(config, why));
});
