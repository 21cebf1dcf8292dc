// prepareOnce (src/store/port/prepare-once.ts): a table read model of operational state is prepared
// once per store handle and shared by every caller; a failed prepare (the store away for a moment)
// is not kept as the answer, so the next call tries again.
import { describe, expect, it } from "vitest";
import { createMemoryReadModels } from "../../src/store/memory/index.js";
import { prepareOnce, StoreUnavailable, type ReadModelShape, type ReadModelStore } from "../../src/store/port.js";

const SHAPE: ReadModelShape = { version: 1, table: { columns: { owner: "text" }, indexes: [["owner", "key"]], row: (doc: { owner: string }) => ({ owner: doc.owner }) } };

/** A memory read-model store counting prepare() calls, failing the first `failures` of them. */
function counted(failures = 0) {
  const store = createMemoryReadModels();
  let calls = 0;
  const prepare: ReadModelStore["prepare"] = (projection, shape) => (++calls <= failures ? Promise.reject(new StoreUnavailable("test: away")) : store.prepare(projection, shape));
  return { store: Object.assign(Object.create(store) as ReadModelStore, { prepare }), calls: () => calls };
}

describe("prepareOnce", () => {
  it("prepares once per store handle, however many callers, and the table is then written and read by its index", async () => {
    const ready = prepareOnce("rm_test_rows", SHAPE);
    const a = counted();
    const b = counted();
    await Promise.all([ready(a.store), ready(a.store), ready(b.store)]);
    await ready(a.store);
    expect([a.calls(), b.calls()]).toEqual([1, 1]);
    await a.store.commitBatch([{ projection: "rm_test_rows", docs: [{ key: "r1", doc: { owner: "o1" } }], checkpoint: 0 }]);
    expect(await a.store.query("rm_test_rows", { where: { owner: "o1" }, order: ["key"], direction: "asc", limit: 10 })).toEqual([{ owner: "o1" }]);
  });

  it("a failed prepare is answered to its caller, and the next call tries again", async () => {
    const ready = prepareOnce("rm_test_rows", SHAPE);
    const a = counted(1);
    await expect(ready(a.store)).rejects.toBeInstanceOf(StoreUnavailable);
    await expect(ready(a.store)).resolves.toBeDefined();
    await ready(a.store);
    expect(a.calls()).toBe(2);
  });
});
