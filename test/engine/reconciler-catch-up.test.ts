// The reconciler indexes the open attempts by reading the events written since its last pass: in
// batches of CATCH_UP_BATCH, one per turn of the event loop (a synchronous store such as SQLite
// would otherwise hold the loop for a whole read of thousands of events), stopping at the first
// short batch (the store's end) without an empty read, and still finding every open attempt.
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { CATCH_UP_BATCH } from "../../src/engine/reconcile.js";
import { sequentialIds } from "../../src/ids.js";
import { memorySide } from "../../src/processors/processor-side.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import type { CreateIntentRequest } from "../../src/inputs.js";

describe("the reconciler's reads", () => {
  it("reads in batches of CATCH_UP_BATCH, each in a turn of its own, up to the first short one, and finds the open attempts", async () => {
    const clock = manualClock();
    const ids = sequentialIds();
    const side = memorySide();
    const simulators = createSimulators({ clock, ids, side });
    const inner = createMemoryStore();
    const reads: Array<{ maxCount: number | undefined; turn: number }> = [];
    let turn = 0;
    const store = { ...inner, readAll: (o: Parameters<typeof inner.readAll>[0]) => (reads.push({ maxCount: o?.maxCount, turn }), inner.readAll(o)) };
    const engine = createEngine({ clock, ids, store, processors: simulators, reconcileGraceMs: 8_000 });
    try {
      await engine.openAccount({ external_account_id: "acct_rc", processor: "B" });
      const intent: CreateIntentRequest = { external_account_id: "acct_rc", amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_rc" };
      for (let i = 0; i < 1_100; i++) await engine.createIntent(intent);
      // one payment whose authorize lost its processor's answer: an attempt left open
      const { payment_id } = (await engine.createIntent(intent)) as { payment_id: string };
      side.set("faults", "calls", { lose: "request", rate: 1 });
      await expect(engine.authorize({ external_account_id: "acct_rc", payment_id })).rejects.toMatchObject({ code: "processor_unavailable" });
      side.set("faults", "calls", undefined);
      const events = (await inner.readAll({})).length;
      expect(events).toBeGreaterThan(2 * CATCH_UP_BATCH);
      await clock.advance(9_000);

      reads.length = 0;
      // count the event loop's turns (setImmediate) while the pass runs
      let counting = true;
      const tick = () => counting && (turn++, setImmediate(tick));
      setImmediate(tick);
      const report = await engine.reconcile();
      counting = false;
      const mine = reads.filter((r) => r.maxCount === CATCH_UP_BATCH);
      // the first catch-up: ceil((events + 1) / batch) reads, the last one short; then the one after resolving
      expect(mine.length).toBeGreaterThanOrEqual(Math.ceil((events + 1) / CATCH_UP_BATCH));
      const first = mine.slice(0, Math.ceil((events + 1) / CATCH_UP_BATCH));
      for (let i = 1; i < first.length; i++) expect(first[i]!.turn).toBeGreaterThan(first[i - 1]!.turn);
      expect(report.found).toBe(1);
      expect(report.resolved.map((r) => r.payment_id)).toEqual([payment_id]);
    } finally {
      await engine.close();
    }
  });
});
