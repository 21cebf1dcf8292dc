// Engines standing for processes on one store and one sandbox processor, on a manual clock: the
// reconciler tests need two (in one process the reconciler waits for the payment's lock, held
// through the call). Each engine is closed after the file's tests.
import { afterAll } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import type { AttemptFault } from "../../src/engine/handlers/pipeline.js";
import { sequentialIds } from "../../src/ids.js";
import { memorySide } from "../../src/processors/processor-side.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createMemoryStore } from "../../src/store/memory/index.js";

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
  return { clock, side, simulators, store, newProcess };
}
