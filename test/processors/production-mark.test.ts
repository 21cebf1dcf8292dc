// The production mark (src/processors/production-mark.ts) on one store: a sandbox refuses a store
// production counted itself in, counts itself otherwise; production waits PRODUCTION_START_WAIT_MS
// only on a store a sandbox process counted itself in; a running sandbox's watch sees production
// come within its period, and its check (before a reconciler pass) throws from then on.
import { describe, expect, it } from "vitest";
import { markOrRefuseProductionStore, markSandboxesStopped, PRODUCTION_PROCESSES, PRODUCTION_START_WAIT_MS, PRODUCTION_WATCH_MS, ProductionStore, watchProductionMark } from "../../src/processors/production-mark.js";
import { createMemoryStore } from "../../src/store/memory/index.js";

describe("the production mark", () => {
  it("production waits only on a store a sandbox ran on, longer than the sandbox's watch period", async () => {
    expect(PRODUCTION_START_WAIT_MS).toBeGreaterThan(PRODUCTION_WATCH_MS);
    const fresh = createMemoryStore();
    expect(await markOrRefuseProductionStore(fresh, false)).toEqual({ waitMs: 0 });
    await expect(markOrRefuseProductionStore(fresh, true)).rejects.toThrow(/^this store holds production payments \(1 production process served it\)/);
    expect(await markOrRefuseProductionStore(fresh, false)).toEqual({ waitMs: 0 }); // the refused sandbox was not counted

    const sandboxed = createMemoryStore();
    expect(await markOrRefuseProductionStore(sandboxed, true)).toEqual({ waitMs: 0 });
    expect(await markOrRefuseProductionStore(sandboxed, false)).toEqual({ waitMs: PRODUCTION_START_WAIT_MS });
    // a production process that did not finish its wait (it died meanwhile): the next one waits too
    expect(await markOrRefuseProductionStore(sandboxed, false)).toEqual({ waitMs: PRODUCTION_START_WAIT_MS });
    // once one waited them out, no sandbox can run here again (each refuses itself): no more waits
    await markSandboxesStopped(sandboxed);
    await expect(markOrRefuseProductionStore(sandboxed, true)).rejects.toBeInstanceOf(ProductionStore);
    expect(await markOrRefuseProductionStore(sandboxed, false)).toEqual({ waitMs: 0 });
  });

  it("a process that appends nothing (reconcile --dry-run) is not counted: a production one neither ends a sandbox nor closes the store to it; a sandbox one adds no wait to production", async () => {
    const store = createMemoryStore();
    expect(await markOrRefuseProductionStore(store, false, { count: false })).toEqual({ waitMs: 0 });
    expect(await markOrRefuseProductionStore(store, true, { count: false })).toEqual({ waitMs: 0 }); // not refused: no production counted
    expect(await markOrRefuseProductionStore(store, false)).toEqual({ waitMs: 0 }); // the sandbox's dry run was not counted either
    // a production store still refuses a sandbox's dry run
    await expect(markOrRefuseProductionStore(store, true, { count: false })).rejects.toBeInstanceOf(ProductionStore);
  });

  it("a running sandbox's watch: nothing while no production process is counted; stop within its period once one is, and check() throws", async () => {
    const store = createMemoryStore();
    const stops: ProductionStore[] = [];
    const watch = watchProductionMark(store, (refusal) => stops.push(refusal), 50);
    try {
      await watch.check();
      await new Promise((r) => setTimeout(r, 120));
      expect(stops).toEqual([]);
      await store.reserveIds(PRODUCTION_PROCESSES, 1);
      await expect.poll(() => stops.length, { timeout: 500, interval: 10 }).toBe(1);
      expect(stops[0]!.message).toMatch(/^a production process started on this store \(1 production process served it\)/);
      await expect(watch.check()).rejects.toBeInstanceOf(ProductionStore);
      expect(stops).toHaveLength(1); // stopped once
    } finally {
      watch.close();
    }
  });
});
