// The contract of read models' versions and tables (ReadModelStore.prepare and query), run by each
// adapter's test file: a version or shape change drops what was stored (the runner folds it
// again), a table read model answers get/getMany/list/count like documents do, and a query reads
// by equality, order and keyset, exactly like a filter and sort of its rows would.
import { describe, expect, it } from "vitest";
import type { ReadModelStore, TableShape } from "../../src/store/port.js";
import { commitOne, harness, type ContractOptions, type StoreFixture } from "./contract.js";

interface Row {
  id: string;
  account: string;
  created: string;
  status: string | null;
  n: number;
}

const TABLE: TableShape<Row> = {
  columns: { account: "text", created: "text", status: "text", n: "integer" },
  fixed: ["account", "created"],
  indexes: [
    ["account", "created", "key"],
    ["account", "status", "created", "key"],
  ],
  row: (d) => ({ account: d.account, created: d.created, status: d.status, n: d.n }),
};
const doc = (id: string, account: string, created: string, status: string | null = "open", n = 1): { key: string; doc: Row } => ({ key: id, doc: { id, account, created, status, n } });
const ids = (rows: Row[]) => rows.map((r) => r.id);

export function readModelTablesContract(name: string, factory: () => Promise<StoreFixture<ReadModelStore>>, options: ContractOptions) {
  const setup = harness(factory);
  const fresh = async () => (await setup()).store;

  describe(`ReadModelStore versions and tables: ${name}`, () => {
    it("keeps documents written before versions (documents at version 1); a new version drops them and the checkpoint", async () => {
      const rm = await fresh();
      await commitOne(rm, "cards", [{ key: "a/1", doc: { v: 1 } }], 4);
      expect(await rm.prepare("cards", { version: 1 })).toBe(false);
      expect([await rm.get("cards", "a/1"), await rm.checkpoint("cards")]).toEqual([{ v: 1 }, 4]);
      expect(await rm.prepare("cards", { version: 2 })).toBe(true);
      expect([await rm.get("cards", "a/1"), await rm.checkpoint("cards"), await rm.count("cards")]).toEqual([undefined, 0, 0]);
      expect(await rm.prepare("cards", { version: 2 })).toBe(false);
    });

    it("a table: documents as rows, read back by key, keys, prefix and count; reset empties it", async () => {
      const rm = await fresh();
      expect(await rm.prepare("pays", { version: 1, table: TABLE })).toBe(true); // documents before: now a table
      await commitOne(rm, "pays", [doc("p1", "A", "2025-01-01"), doc("p2", "A", "2025-01-02"), doc("q1", "B", "2025-01-01")], 3);
      expect(await rm.get("pays", "p2")).toEqual(doc("p2", "A", "2025-01-02").doc);
      expect([...(await rm.getMany<Row>("pays", ["p1", "zz", "q1"])).keys()].sort()).toEqual(["p1", "q1"]);
      expect(ids(await rm.list<Row>("pays", "p"))).toEqual(["p1", "p2"]);
      expect(ids(await rm.list<Row>("pays", "", { after: "p1", limit: 1 }))).toEqual(["p2"]);
      expect([await rm.count("pays"), await rm.checkpoint("pays")]).toEqual([3, 3]);
      await rm.reset("pays");
      expect([await rm.count("pays"), await rm.checkpoint("pays")]).toEqual([0, 0]);
    });

    it("queries by equality, order and keyset, reading at most the limit; fixed columns keep their first value", async () => {
      const rm = await fresh();
      await rm.prepare("pays", { version: 1, table: TABLE });
      await commitOne(rm, "pays", [doc("p1", "A", "2025-01-01"), doc("p2", "A", "2025-01-02", "done"), doc("p3", "A", "2025-01-02"), doc("p4", "A", "2025-01-03", null), doc("q1", "B", "2025-01-05")], 1);
      const newest = (where: Record<string, string | null>, after?: [string, string], limit = 10) =>
        rm.query<Row>("pays", { where, order: ["created", "key"], direction: "desc", ...(after && { after }), limit }).then(ids);
      expect(await newest({ account: "A" })).toEqual(["p4", "p3", "p2", "p1"]);
      expect(await newest({ account: "A" }, undefined, 2)).toEqual(["p4", "p3"]);
      expect(await newest({ account: "A" }, ["2025-01-02", "p3"], 2)).toEqual(["p2", "p1"]);
      expect(await newest({ account: "A", status: "open" })).toEqual(["p3", "p1"]);
      expect(await newest({ account: "A", status: null })).toEqual(["p4"]);
      expect(await newest({ account: "C" })).toEqual([]);
      const oldest = await rm.query<Row>("pays", { where: { account: "A" }, order: ["created", "key"], direction: "asc", after: ["2025-01-01", "p1"], limit: 2 });
      expect(ids(oldest)).toEqual(["p2", "p3"]);
      // an update changes the document and its other columns; account and created stay
      await commitOne(rm, "pays", [{ key: "p1", doc: { id: "p1", account: "Z", created: "2030-01-01", status: "done", n: 2 } }], 2);
      expect(await newest({ account: "A", status: "done" })).toEqual(["p2", "p1"]);
      expect(await newest({ account: "Z" })).toEqual([]);
      expect(await rm.get("pays", "p1")).toMatchObject({ account: "Z", n: 2 });
      await expect(rm.query("pays", { where: { nope: "x" }, order: ["key"], direction: "asc", limit: 1 })).rejects.toThrow(/no column nope/);
    });

    it("a key given twice in one commit: its row holds the last document and its columns", async () => {
      const rm = await fresh();
      await rm.prepare("pays", { version: 1, table: TABLE });
      await commitOne(rm, "pays", [doc("p1", "A", "2025-01-01"), doc("p1", "A", "2025-01-01", "done")], 1);
      expect(await rm.get("pays", "p1")).toEqual(doc("p1", "A", "2025-01-01", "done").doc);
      expect(ids(await rm.query<Row>("pays", { where: { account: "A", status: "done" }, order: ["key"], direction: "asc", limit: 5 }))).toEqual(["p1"]);
      expect(await rm.count("pays")).toBe(1);
    });

    it("columns: the stored columns of a table's rows among the keys, integers as numbers, fixed columns at their first value; none for documents", async () => {
      const rm = await fresh();
      await rm.prepare("pays", { version: 1, table: TABLE });
      await commitOne(rm, "pays", [doc("p1", "A", "2025-01-01"), doc("p2", "A", "2025-01-02", null, 7)], 1);
      await commitOne(rm, "pays", [{ key: "p1", doc: { id: "p1", account: "Z", created: "2030-01-01", status: "done", n: 2 } }], 2);
      expect(rm.columns).toBeTypeOf("function");
      const columns = await rm.columns!("pays", ["p1", "p2", "zz"]);
      expect(Object.fromEntries(columns)).toEqual({ p1: { account: "A", created: "2025-01-01", status: "done", n: 2 }, p2: { account: "A", created: "2025-01-02", status: null, n: 7 } });
      expect((await rm.columns!("pays", [])).size).toBe(0);
      await commitOne(rm, "cards", [{ key: "a/1", doc: { v: 1 } }], 4);
      expect((await rm.columns!("cards", ["a/1"])).size).toBe(0);
    });

    it("get, list and query read each change (a document parsed once is shared, frozen, until its text changes); getMany's documents are the caller's to change", async () => {
      const rm = await fresh();
      await rm.prepare("pays", { version: 1, table: TABLE });
      await commitOne(rm, "pays", [doc("p1", "A", "2025-01-01")], 1);
      const reads = async () => [await rm.get<Row>("pays", "p1"), (await rm.list<Row>("pays", "p"))[0], (await rm.query<Row>("pays", { where: { account: "A" }, order: ["key"], direction: "asc", limit: 1 }))[0]];
      const first = await reads();
      expect(first.map((r) => r?.n)).toEqual([1, 1, 1]);
      // SQLite and PostgreSQL share one parse (src/store/port/parsed-docs.ts); memory freezes its copies alike
      expect(first.every((r) => Object.isFrozen(r))).toBe(true);
      expect(() => ((first[0] as Row).n = 9)).toThrow(TypeError);
      await commitOne(rm, "pays", [{ key: "p1", doc: { ...doc("p1", "A", "2025-01-01").doc, n: 2 } }], 2);
      expect((await reads()).map((r) => r?.n)).toEqual([2, 2, 2]);
      const mine = (await rm.getMany<Row>("pays", ["p1"])).get("p1")!;
      mine.n = 7;
      expect((await rm.get<Row>("pays", "p1"))!.n).toBe(2);
    });

    it("a changed shape (an index more) drops the table and the checkpoint; a document read model again drops the table", async () => {
      const rm = await fresh();
      await rm.prepare("pays", { version: 1, table: TABLE });
      await commitOne(rm, "pays", [doc("p1", "A", "2025-01-01")], 5);
      expect(await rm.prepare("pays", { version: 1, table: TABLE })).toBe(false);
      expect(await rm.count("pays")).toBe(1);
      const more = { ...TABLE, indexes: [...TABLE.indexes, ["n", "key"]] };
      expect(await rm.prepare("pays", { version: 1, table: more })).toBe(true);
      expect([await rm.count("pays"), await rm.checkpoint("pays")]).toEqual([0, 0]);
      await commitOne(rm, "pays", [doc("p2", "A", "2025-01-01", "open", 7)], 6);
      expect(ids(await rm.query<Row>("pays", { where: { n: 7 }, order: ["key"], direction: "asc", limit: 5 }))).toEqual(["p2"]);
      expect(await rm.prepare("pays", { version: 2 })).toBe(true);
      await commitOne(rm, "pays", [{ key: "d", doc: { plain: true } }], 7);
      expect([await rm.get("pays", "d"), await rm.count("pays")]).toEqual([{ plain: true }, 1]);
    });

    it("refuses names that are not plain identifiers", async () => {
      const rm = await fresh();
      await expect(rm.prepare("pays; DROP TABLE x", { version: 1 })).rejects.toThrow(/read model name/);
      await expect(rm.prepare("pays", { version: 1, table: { ...TABLE, columns: { "a b": "text" }, fixed: [], indexes: [] } })).rejects.toThrow(/column name/);
    });

    if (options.durable) {
      it("another handle reads the table without preparing it, and refuses to write it before prepare()", async () => {
        const { store: a, open } = await setup();
        await a.prepare("pays", { version: 1, table: TABLE });
        await commitOne(a, "pays", [doc("p1", "A", "2025-01-01")], 1);
        const b = await open();
        expect(ids(await b.query<Row>("pays", { where: { account: "A" }, order: ["created", "key"], direction: "desc", limit: 5 }))).toEqual(["p1"]);
        expect(await b.get("pays", "p1")).toMatchObject({ id: "p1" });
        await expect(commitOne(b, "pays", [doc("p2", "A", "2025-01-01")], 2)).rejects.toThrow(/prepare/);
        expect(await b.prepare("pays", { version: 1, table: TABLE })).toBe(false);
        await commitOne(b, "pays", [doc("p2", "A", "2025-01-01")], 2, 1);
        expect(await a.count("pays")).toBe(2);
      });
    }
  });
}
