// The documents of a commit under way (SQLite's committer thread) are answered by every read of
// the handle that posted it, as if committed: the same reads made while the commit is under way and
// after it landed answer the same (fast-check: stored documents, a batch changing some and adding
// others, queries by every kind of index with keysets and prefixes, key-prefix listings, gets).
// The runner tells the lists waiting for a position once the batch holding it is posted; this is
// what makes that safe. A failed commit stops answering its documents in the turn it counts as
// dropped, and a commit folded on state another process has moved on is refused before it is under
// way (its documents may be wrong).
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { compareText, type TableQuery } from "../../src/store/port/tables.js";
import { CheckpointConflict } from "../../src/store/port.js";
import { createSqliteStore, readModelsPath } from "../../src/store/sqlite/index.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-under-way-"));
const path = join(dir, "c.db");
const { events, readModels } = createSqliteStore({ path });
afterAll(async () => {
  await events.close();
  await readModels.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Doc {
  account: string;
  created: string;
  status: string;
  ref: string | null;
}
const shape = {
  version: 1,
  table: {
    columns: { account: "text", created: "text", status: "text", ref: "text" },
    fixed: ["account", "created"],
    indexes: [["account", "created", "key"], ["account", "status", "created", "key"], ["account", "key"], ["account", "ref", "key"]],
    row: (d: Doc) => ({ account: d.account, created: d.created, status: d.status, ref: d.ref }),
  },
} as const;

const key = fc.constantFrom("k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k10", "k11", "x1", "x2");
const doc = fc.record({ account: fc.constantFrom("a", "b"), created: fc.constantFrom("t1", "t2", "t3"), status: fc.constantFrom("open", "done"), ref: fc.constantFrom(null, "r1", "r12", "s2") });
const docs = fc.uniqueArray(fc.tuple(key, doc), { selector: ([k]) => k, maxLength: 10 });
const query: fc.Arbitrary<TableQuery> = fc.oneof(
  fc.record({
    where: fc.oneof(fc.record({ account: fc.constantFrom("a", "b") }), fc.record({ account: fc.constantFrom("a", "b"), status: fc.constantFrom("open", "done") })),
    order: fc.constant(["created", "key"]),
    direction: fc.constantFrom("asc" as const, "desc" as const),
    after: fc.option(fc.tuple(fc.constantFrom("t1", "t2", "t3"), key), { nil: undefined }),
    limit: fc.integer({ min: 1, max: 6 }),
  }),
  fc.record({
    where: fc.record({ account: fc.constantFrom("a", "b") }),
    order: fc.constant(["key"]),
    direction: fc.constant("asc" as const),
    prefix: fc.record({ column: fc.constant("key"), value: fc.constantFrom("k", "k1", "x") }),
    limit: fc.integer({ min: 1, max: 6 }),
  }),
  fc.record({
    where: fc.record({ account: fc.constantFrom("a", "b") }),
    order: fc.constant(["ref", "key"]),
    direction: fc.constant("asc" as const),
    prefix: fc.record({ column: fc.constant("ref"), value: fc.constantFrom("r", "r1", "s") }),
    limit: fc.integer({ min: 1, max: 6 }),
  }),
);
const commitOf = (projection: string, entries: [string, Doc][], checkpoint: number) => [{ projection, docs: entries.map(([k, d]) => ({ key: k, doc: d })), checkpoint, expectedCheckpoint: checkpoint - 1 }];

let run = 0;
describe("SQLite: the reads of documents under way", () => {
  it("answer what the same reads answer once the commit landed", { timeout: 120_000 }, async () => {
    expect(readModels.ordered).toBe(true);
    await fc.assert(
      fc.asyncProperty(docs, docs, fc.array(query, { minLength: 1, maxLength: 8 }), fc.constantFrom("", "k", "k1", "x"), async (stored, changed, queries, prefix) => {
        const table = `uw_t${++run}`;
        const plain = `uw_d${run}`;
        await readModels.prepare(table, shape);
        await readModels.commitBatch([...commitOf(table, stored, 1), ...commitOf(plain, stored, 1)]);
        const reads = () =>
          Promise.all([
            ...queries.map((q) => readModels.query(table, q)),
            ...[table, plain].flatMap((p) => [readModels.list(p, prefix), readModels.list(p, prefix, { limit: 2 }), readModels.list(p, prefix, { after: "k2", limit: 3 })]),
            ...["k1", "k2", "x1"].map((k) => readModels.get(plain, k)),
          ]);
        // fixed columns are a document's first values for good (TableShape.fixed)
        const first = new Map(stored);
        changed = changed.map(([k, d]) => [k, first.has(k) ? { ...d, account: first.get(k)!.account, created: first.get(k)!.created } : d]);
        const committing = readModels.commitBatch([...commitOf(table, changed, 2), ...commitOf(plain, changed, 2)]);
        const underWay = reads(); // made in this turn: the commit is still with the committer
        await committing;
        expect(await underWay).toEqual(await reads());
      }),
      { numRuns: 60 },
    );
  });

  it("stop answering a failed commit's documents in the turn it is counted as dropped; a commit already known to conflict is refused before it is under way, and counted", async () => {
    const projection = "uw_failed";
    await readModels.commitBatch([{ projection, docs: [{ key: "k", doc: { n: 1 } }], checkpoint: 1 }]);
    const before = readModels.dropped!;
    // another process holds the lock while this commit is posted, then moves the checkpoint
    const other = new Database(readModelsPath(path));
    other.exec("BEGIN IMMEDIATE");
    const failing = readModels.commitBatch([{ projection, docs: [{ key: "k", doc: { n: 2 } }], checkpoint: 2, expectedCheckpoint: 1 }]);
    expect(await readModels.get(projection, "k")).toEqual({ n: 2 });
    other.prepare("UPDATE checkpoints SET position = 9 WHERE projection = ?").run(projection);
    other.exec("COMMIT");
    other.close();
    await expect(failing).rejects.toBeInstanceOf(CheckpointConflict);
    expect(readModels.dropped).toBe(before + 1);
    expect(await readModels.get(projection, "k")).toEqual({ n: 1 });
    // folded on a checkpoint the store has moved past: refused at once, never answered, and counted
    // as dropped before the call returns (a caller that took its batch as posted would read past it)
    const stale = readModels.commitBatch([{ projection, docs: [{ key: "k", doc: { n: 3 } }], checkpoint: 3, expectedCheckpoint: 2 }]);
    expect(readModels.dropped).toBe(before + 2);
    expect(await readModels.get(projection, "k")).toEqual({ n: 1 });
    await expect(stale).rejects.toBeInstanceOf(CheckpointConflict);
  });

  it("refuse a commit that follows one under way once another process's commit moved the checkpoint: documents read for it may hold that commit's events", async () => {
    const projection = "uw_chain";
    await readModels.commitBatch([{ projection, docs: [{ key: "a", doc: { n: 1 } }, { key: "b", doc: { n: 1 } }], checkpoint: 1 }]);
    const before = readModels.dropped!;
    const other = new Database(readModelsPath(path));
    other.exec("BEGIN IMMEDIATE");
    // this process's commit waits for the lock, under way
    const first = readModels.commitBatch([{ projection, docs: [{ key: "a", doc: { n: 2 } }], checkpoint: 2, expectedCheckpoint: 1 }]);
    // the other process commits its own fold of the same events, further: b moved on, checkpoint 3
    other.prepare("UPDATE checkpoints SET position = 3 WHERE projection = ?").run(projection);
    other.exec("COMMIT");
    other.close();
    // in the same turn (whatever the committer's thread does meanwhile), b read for the next commit is
    // the other's: the next commit follows this process's under way, but is refused, never answered
    const next = readModels.commitBatch([{ projection, docs: [{ key: "b", doc: { n: 7 } }], checkpoint: 3, expectedCheckpoint: 2 }]);
    expect(readModels.dropped).toBe(before + 1);
    expect(await readModels.get(projection, "b")).toEqual({ n: 1 });
    await expect(next).rejects.toBeInstanceOf(CheckpointConflict);
    await expect(first).rejects.toBeInstanceOf(CheckpointConflict);
    expect(readModels.dropped).toBe(before + 2);
    // none under way any more: a commit expecting the stored checkpoint is posted and answered
    const after = readModels.commitBatch([{ projection, docs: [{ key: "b", doc: { n: 4 } }], checkpoint: 4, expectedCheckpoint: 3 }]);
    expect(await readModels.get(projection, "b")).toEqual({ n: 4 });
    await after;
    expect(await readModels.checkpoint(projection)).toBe(4);
  });

  it("post a chain of commits while one is under way, and take each answer in turn", async () => {
    const projection = "uw_ok";
    await readModels.commitBatch([{ projection, docs: [{ key: "a", doc: { n: 1 } }], checkpoint: 1 }]);
    const other = new Database(readModelsPath(path));
    other.exec("BEGIN IMMEDIATE");
    const chain = [2, 3, 4].map((n) => readModels.commitBatch([{ projection, docs: [{ key: "a", doc: { n } }], checkpoint: n, expectedCheckpoint: n - 1 }]));
    expect(await readModels.get(projection, "a")).toEqual({ n: 4 });
    other.exec("ROLLBACK");
    other.close();
    await Promise.all(chain);
    expect(await readModels.checkpoint(projection)).toBe(4);
  });
});

describe("compareText", () => {
  it("orders text as its UTF-8 bytes, the stores' order, surrogate pairs and lone surrogates included", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "b", "\u00e9", "\ud7ff", "\ue000", "\uffff", "\ud83d\ude00", "\ud800", "\udc00"), maxLength: 6 });
    fc.assert(fc.property(text, text, (a, b) => Math.sign(compareText(a, b)) === Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)))), { numRuns: 2_000 });
  });
});
