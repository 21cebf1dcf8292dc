// Engines standing for processes on one store and one sandbox processor, on a manual clock: the
// reconciler tests need two (in one process the reconciler waits for the payment's lock, held
// through the call). Each engine is closed after the file's tests.
import { afterAll, expect } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import type { AttemptFault } from "../../src/engine/handlers/pipeline.js";
import { sequentialIds } from "../../src/ids.js";
import { memorySide } from "../../src/processors/processor-side.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createMemoryStore } from "../../src/store/memory/index.js";

/** Waits (a real 5 ms between looks, up to a second) until `done`, and fails if it never is. */
export async function until(done: () => Promise<boolean>) {
  for (let i = 0; i < 200 && !(await done()); i++) await new Promise((r) => setTimeout(r, 5));
  expect(await done()).toBe(true);
}

export function processesOnOneStore({ reconcileGraceMs }: { reconcileGraceMs: number }) {
  const clock = manualClock();
  const ids = sequentialIds();
  const side = memorySide();
  const simulators = createSimulators({ clock, ids, side });
  const store = createMemoryStore();
  const engines: ReturnType<typeof createEngine>[] = [];
  afterAll(() => Promise.all(engines.map((e) => e.close())));
  /**
   * A process (an engine), with its crash points (`fault`) if any, seeing the store through `view`
   * (a lagging feed); `ownCalls`: its processor calls are its own, as in another process (the
   * simulators' ledger is shared, their calls in flight are not).
   */
  const newProcess = (fault?: AttemptFault, view: (s: typeof store) => typeof store = (s) => s, ownCalls = false) => {
    const processors = ownCalls ? createSimulators({ clock, ids, side }) : simulators;
    const engine = createEngine({ clock, ids, store: view(store), processors, reconcileGraceMs, ...(fault && { fault }) });
    engines.push(engine);
    return engine;
  };
  const refundsAttempted = async (paymentId: string) => (await store.readStream(`payment-${paymentId}`)).filter((e) => e.type === "RefundAttempted").length;

  /**
   * A late answer that lands while another call on the payment is in flight: refund A (`first`)
   * has its call made 12 s late and `reconcile` abandons it at 9 s; refund B (`second`) is made at
   * 10 s, its call on its way until 25 s; A lands at 12 s. Returns A settled, B still on its way.
   */
  async function landsWhileAnotherInFlight<A, B>(paymentId: string, first: () => Promise<A>, reconcile: () => Promise<unknown>, second: () => Promise<B>) {
    side.set("faults", "calls", { latency_ms: 12_000 });
    const a = first();
    await until(async () => (await refundsAttempted(paymentId)) === 1);
    side.set("faults", "calls", undefined);
    await clock.advance(9_000);
    await reconcile();
    await clock.advance(1_000);
    side.set("faults", "calls", { latency_ms: 15_000 });
    const b = second();
    await until(async () => (await refundsAttempted(paymentId)) === 2);
    side.set("faults", "calls", undefined);
    await clock.advance(2_000);
    return { a: await a, b };
  }

  return { clock, side, simulators, store, newProcess, landsWhileAnotherInFlight };
}
