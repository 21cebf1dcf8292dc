// Every simple path of the payment machine (xstate/graph), driven through the engine, and the
// shortest path into every attempt state (a command stopped by a crash right after its attempt)
// with each way it ends (the reconciler's outcome or abandonment): after each step the engine's
// payment record must be the record of the machine's state, and the amounts must hold their
// invariants. Coverage of the machine's transitions is computed from its graph.
import { beforeAll, describe, expect, it } from "vitest";
import type { PaymentEvent } from "../../machines/events.js";
import { applyPaymentEvent, initialPaymentSnapshot, stateOf, type PaymentSnapshot } from "../../machines/fold.js";
import { machineTransitions } from "../../machines/transitions.js";
import { paymentRecord, type PaymentRecord } from "../../src/present/payment-record.js";
import { manualClock } from "../../src/clock.js";
import { createEngine, type Engine } from "../../src/engine.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { sequentialIds } from "../../src/ids.js";
import { assertAmountInvariants } from "../support/invariants.js";
import { attemptPaths, crashFault, drive, referencePaths, simplePaths, type World } from "../support/paths.js";
import { scriptedProcessors, type ScriptedProcessors } from "../support/scripted-processor.js";

/** The fields the engine fills in from ids and the clock, which the model cannot know. */
const ASSIGNED = ["payment_id", "date_created", "request_id", "terminal_id", "authorization_code"] as const;
const comparable = (r: PaymentRecord) => {
  const copy: Record<string, unknown> = { ...r };
  for (const k of ASSIGNED) delete copy[k];
  return copy;
};

const taken = (before: PaymentSnapshot, event: PaymentEvent, after: PaymentSnapshot) =>
  `${String(before.value)} --${event.type}--> ${String(after.value)}`;

describe("every simple path of the payment machine, through the engine", () => {
  let engine: Engine;
  let scripted: ScriptedProcessors;
  let world: World;

  beforeAll(async () => {
    scripted = scriptedProcessors();
    const clock = manualClock();
    engine = createEngine({ processors: scripted, clock, ids: sequentialIds(), fault: crashFault });
    await engine.openAccount({ external_account_id: "acct_a", processor: "A" });
    await engine.openAccount({ external_account_id: "acct_b", processor: "B" });
    world = {};
    for (const account of ["acct_a", "acct_b"]) {
      world[account] = {
        asyncTerminal: (await engine.registerTerminal({ external_account_id: account, terminal_type: "A_async" })).terminal_id,
        reader: (await engine.registerTerminal({ external_account_id: account, terminal_type: "B_reader" })).terminal_id,
      };
    }
  });

  it("walks every path, each step's record equal to the machine's state, and covers every transition", async () => {
    const paths = [...simplePaths(world), ...attemptPaths(world), ...referencePaths(world)];
    const covered = new Set<string>();
    let commands = 0;
    for (const path of paths) {
      const payment = { id: "", account: "", client_secret: null as string | null };
      let before = initialPaymentSnapshot;
      // xstate/graph starts each path with the machine's own init step
      const events = path.steps.map((s) => s.event as PaymentEvent).filter((e) => !e.type.startsWith("xstate."));
      const trail = events.map((e) => e.type).join(" > ");
      for (let i = 0; i < events.length; commands++) {
        // one command may take several steps (a card form's collect also processes): the record is
        // compared after them, and each of their transitions is covered
        // a command the engine refuses names the path, the step and the payment's stream so far
        const taking = await drive(engine, scripted, world, before, events.slice(i), payment).catch(async (error: Error) => {
          const stream = (await engine.store.readStream(`payment-${payment.id}`)).map((e) => `  ${e.type} ${JSON.stringify(e.data)}`);
          throw new Error(`${trail}, step ${i}: ${error.message}\n${stream.join("\n")}`);
        });
        for (const event of events.slice(i, i + taking)) {
          const after = applyPaymentEvent(before, event);
          if (!after) throw new Error(`path event ${event.type} not allowed after ${String(before.value)}`);
          covered.add(taken(before, event, after));
          before = after;
        }
        i += taking;
        const record = await engine.getPayment({ external_account_id: payment.account, payment_id: payment.id });
        expect(record.status, trail).toBe(before.value);
        expect(comparable(record), trail).toEqual(comparable(paymentRecord(stateOf(before), 0)));
        assertAmountInvariants(record);
      }
    }
    const all = machineTransitions().map((t) => t.id);
    const missing = all.filter((t) => !covered.has(t));
    console.info(`machine: ${all.length} transitions, ${paths.length} simple paths, ${commands} commands; covered ${covered.size}/${all.length}`);
    expect(missing).toEqual([]);
    expect([...covered].every((t) => all.includes(t))).toBe(true);
  });

  it("rebuilding every read model from position zero gives what live updates gave", async () => {
    await engine.projections.catchUp();
    for (const { name } of PROJECTIONS) {
      const live = await engine.readModels.list(name, "");
      await engine.projections.rebuild(name);
      expect(await engine.readModels.list(name, "")).toEqual(live);
    }
  });
});
