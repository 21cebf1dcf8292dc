// The read models' file: documents and checkpoints on a connection of their own, committed with
// synchronous=NORMAL (rebuilt from the events, docs/stores.md) by a worker thread off the event
// loop (./committer.ts); a bulk catch-up from zero commits on this connection with
// synchronous=OFF behind a durable mark (./unsynced.ts).
import type Database from "better-sqlite3";
import { parsedDocs } from "../port/parsed-docs.js";
import { CheckpointConflict, checkCheckpoint, parseDocument, type ListPage, type ProjectionCommit, type ReadModelStore } from "../port/read-models.js";
import { prefixEnd } from "../sql.js";
import type { OffLoopCheckpoints } from "./checkpoints.js";
import type { Write } from "./open.js";
import { sqliteTables, type Upsert } from "./tables.js";
import type { CommitPlan, Committer } from "./committer.js";
import { bootId, markUnsynced, syncAndUnmark } from "./unsynced.js";
import { LIMIT } from "./limit.js";
import type { Columns, Doc } from "../port/tables.js";
import { listUnderWay, pageUnderWay } from "../port/under-way.js";

const PUT_DOC = "INSERT INTO read_models (projection, key, doc) VALUES (?, ?, ?) ON CONFLICT (projection, key) DO UPDATE SET doc = excluded.doc";

export function sqliteReadModels(rm: Database.Database, path: string, write: Write, close: () => Promise<void>, offLoop?: { checkpoints: OffLoopCheckpoints; committer: Committer }): ReadModelStore {
  const { checkpoints, committer } = offLoop ?? {};
  const q = {
    checkpoint: rm.prepare<[string], { position: number }>("SELECT position FROM checkpoints WHERE projection = ?"),
    setCheckpoint: rm.prepare("INSERT INTO checkpoints (projection, position) VALUES (?, ?) ON CONFLICT (projection) DO UPDATE SET position = excluded.position"),
    getDoc: rm.prepare<[string, string], { doc: string }>("SELECT doc FROM read_models WHERE projection = ? AND key = ?"),
    // The keys come as one JSON array parameter: one statement for a whole batch, whatever its size.
    getDocs: rm.prepare<[string, string], { key: string; doc: string }>(
      "SELECT key, doc FROM read_models WHERE projection = ? AND key IN (SELECT value FROM json_each(?))",
    ),
    // The prefix's range of the primary key (prefixEnd), not a filter: the listing reads its page only.
    listDocs: rm.prepare<[string, string, string, string, number], { key: string; doc: string }>(
      `SELECT key, doc FROM read_models WHERE projection = ? AND key >= ? AND key < ? AND key > ? ORDER BY key ${LIMIT}`,
    ),
    listAll: rm.prepare<[string, string, number], { key: string; doc: string }>(`SELECT key, doc FROM read_models WHERE projection = ? AND key > ? ORDER BY key ${LIMIT}`),
    countDocs: rm.prepare<[string], { n: number }>("SELECT count(*) AS n FROM read_models WHERE projection = ?"),
    resetDocs: rm.prepare("DELETE FROM read_models WHERE projection = ?"),
    resetCheckpoint: rm.prepare("DELETE FROM checkpoints WHERE projection = ?"),
  };

  const tables = sqliteTables(rm);
  const documents = (projection: string): Upsert => ({ sql: PUT_DOC, params: (key, _doc, text) => [projection, key, text] });
  /**
   * The documents of commits under way in the committer, as JSON by projection and key: every read
   * answers them (ReadModelStore.ordered, ../port/under-way.ts) until their commit is answered.
   */
  const underWay = new Map<string, Map<string, { text: string; row?: Columns }>>();
  const underWayOf = (projection: string) => [...(underWay.get(projection) ?? [])];
  /** Commits under way that failed, and commits refused at their call (ReadModelStore.dropped). */
  let dropped = 0;
  /**
   * By projection, its commits under way: the checkpoint each expects, in order, and the last one's
   * own (the one the next commit must expect). While they are under way the stored checkpoint is
   * one of those (what the first expects, or one the committer reached since), unless another
   * process committed: then documents read from the store for the next commit may hold events past
   * its checkpoint, and the commit under way fails anyway.
   */
  const chains = new Map<string, { expects: number[]; last: number }>();
  /** Throws CheckpointConflict when a commit expecting `expected` may hold documents another process's commit moved on. */
  function checkPostable(projection: string, expected: number | undefined): number {
    const stored = q.checkpoint.get(projection)?.position ?? 0;
    const chain = chains.get(projection);
    checkCheckpoint(projection, expected, chain ? chain.last : stored);
    if (chain && stored !== chain.last && !chain.expects.includes(stored)) throw new CheckpointConflict(projection, expected ?? chain.last, stored);
    return expected ?? stored;
  }
  /** A projection's commit as statements (built here, run here in bulk or by the committer, ./committer.ts, its twin of commitPlans), and its documents' JSON. */
  const planOf = ({ projection, docs, checkpoint, expectedCheckpoint }: ProjectionCommit, underWayToo: boolean) => {
    const upsert = tables.isTable(projection) ? tables.upsert(projection) : documents(projection);
    // under way, a table's documents with their columns: a query merges them (../port/under-way.ts)
    const table = underWayToo ? tables.prepared(projection) : undefined;
    const written = docs.map(({ key, doc }) => ({ projection, key, text: JSON.stringify(doc), ...(table && { row: { ...table.row(doc), key } }) }));
    const rows = docs.map(({ key, doc }, i) => upsert.params(key, doc, written[i]!.text, written[i]!.row));
    const plan: CommitPlan = { projection, expectedCheckpoint, checkpoint, writes: rows.length ? [{ sql: upsert.sql, rows }] : [] };
    return { plan, written };
  };
  // Run with .immediate(): checkpoints are read under the write lock, so the checks hold across processes.
  // A failed check throws out of the transaction, which rolls back every projection's writes.
  const commitPlans = rm.transaction((plans: readonly CommitPlan[]) => {
    for (const { projection, expectedCheckpoint, checkpoint, writes } of plans) {
      checkCheckpoint(projection, expectedCheckpoint, q.checkpoint.get(projection)?.position ?? 0);
      for (const { sql, rows } of writes) tables.runEach(sql, rows);
      q.setCheckpoint.run(projection, checkpoint);
    }
  });
  const resetReadModels = rm.transaction((projection: string) => {
    if (tables.isTable(projection)) tables.reset(projection);
    else q.resetDocs.run(projection);
    q.resetCheckpoint.run(projection);
  });
  const prepareReadModel = rm.transaction(tables.prepare);
  const parse = parsedDocs();
  const parsed = <T>(projection: string, rows: { key: string; doc: string }[]) => rows.map((r) => parse<T>(projection, r.key, r.doc));
  /** The rows of a listing (list, keys): stored, and this connection's under way. */
  function listed(projection: string, keyPrefix: string, { after = "", limit = -1 }: ListPage = {}) {
    const to = keyPrefix === "" ? null : prefixEnd(keyPrefix);
    const from = after > keyPrefix ? after : keyPrefix;
    const read = (n: number) =>
      tables.isTable(projection) ? tables.list(projection, keyPrefix, to, after, n) : to === null ? q.listAll.all(projection, after, n) : q.listDocs.all(projection, from, to, after, n);
    const mine = underWayOf(projection).map(([key, { text }]) => ({ key, doc: text }));
    return listUnderWay(mine, { from: keyPrefix, to, after, limit }, read);
  }

  /** The open bulk window of this connection: its mark, how many bulk() calls are inside it, what makes the dropped indexes again. */
  let unsynced: { mark: string; depth: number; reindex: () => void } | undefined;
  const boot = path === ":memory:" ? null : bootId();

  return {
    async checkpoint(projection) {
      return q.checkpoint.get(projection)?.position ?? 0;
    },
    async get<T>(projection: string, key: string) {
      const doc = underWay.get(projection)?.get(key)?.text ?? (tables.isTable(projection) ? tables.get(projection, key) : q.getDoc.get(projection, key)?.doc);
      return doc === undefined ? undefined : parse<T>(projection, key, doc);
    },
    async getMany<T>(projection: string, keys: readonly string[]) {
      const found = new Map<string, T>();
      if (keys.length === 0) return found;
      const rows = tables.isTable(projection) ? tables.getMany(projection, JSON.stringify(keys)) : q.getDocs.all(projection, JSON.stringify(keys));
      for (const r of rows) found.set(r.key, parseDocument<T>(projection, r.key, r.doc));
      const pending = underWay.get(projection);
      if (pending) for (const key of keys) if (pending.has(key)) found.set(key, parseDocument<T>(projection, key, pending.get(key)!.text));
      return found;
    },
    async list<T>(projection: string, keyPrefix: string, page?: ListPage) {
      return parsed<T>(projection, listed(projection, keyPrefix, page));
    },
    async keys(projection: string, keyPrefix: string, page?: ListPage) {
      return listed(projection, keyPrefix, page).map((r) => r.key);
    },
    async columns(projection, keys) {
      const found = new Map<string, Columns>();
      if (keys.length === 0) return found;
      const withoutKey = ({ key: _key, ...columns }: Columns) => columns;
      for (const row of tables.columns(projection, JSON.stringify(keys))) found.set(String(row.key), withoutKey(row));
      // this connection's commits under way, as a read of their documents answers them
      const pending = underWay.get(projection);
      if (pending) for (const key of keys) if (pending.get(key)?.row) found.set(key, withoutKey(pending.get(key)!.row!));
      return found;
    },
    async count(projection) {
      return tables.isTable(projection) ? tables.count(projection) : q.countDocs.get(projection)!.n;
    },
    async prepare(projection, shape) {
      return write(() => prepareReadModel.immediate(projection, shape));
    },
    async query<T>(projection: string, query: Parameters<ReadModelStore["query"]>[1]) {
      const table = tables.prepared(projection);
      const mine = underWayOf(projection);
      if (mine.length === 0 || !table) return parsed<T>(projection, tables.query(projection, query));
      const columnsOf = ({ key, doc }: Doc): Columns => ({ ...table.row(parse(projection, key, doc)), key });
      const under = mine.map(([key, { text, row }]) => ({ key, doc: text, row: row ?? columnsOf({ key, doc: text }) }));
      return parsed<T>(projection, pageUnderWay(query, table.fixed ?? [], under, (limit) => tables.query(projection, { ...query, limit }), columnsOf));
    },
    // in call order when the committer runs them (one thread, one at a time); a bulk window's
    // commits, retried on this connection while another process holds the lock, may not be
    get ordered() {
      return committer !== undefined && !unsynced;
    },
    get dropped() {
      return dropped;
    },
    async commitBatch(commits) {
      // The read models' file commits with synchronous=NORMAL (no fsync; docs/stores.md): atomic
      // still, the documents with their checkpoint. Off the loop (the committer), but in a bulk
      // window: that one commits unsynced on this connection, as fast as it can.
      const underWayToo = committer !== undefined && !unsynced;
      const planned = commits.map((c) => planOf(c, underWayToo));
      const plans = planned.map((p) => p.plan);
      if (!underWayToo) return write(() => commitPlans.immediate(plans));
      // Checked here first (the committer checks again under its lock): documents folded on state
      // that another process's commit had moved on may be wrong, and must not be answered; those
      // checked here are right, whoever commits them in the end.
      // A refusal counts as dropped (in this turn, before the caller can take the batch as posted).
      let expects: number[];
      try {
        expects = commits.map(({ projection, expectedCheckpoint }) => checkPostable(projection, expectedCheckpoint));
      } catch (error) {
        dropped++;
        throw error;
      }
      commits.forEach(({ projection, checkpoint }, i) => {
        const chain = chains.get(projection) ?? chains.set(projection, { expects: [], last: checkpoint }).get(projection)!;
        chain.expects.push(expects[i]!);
        chain.last = checkpoint;
      });
      const entries = planned.flatMap((p) => p.written);
      for (const { projection, key, ...entry } of entries) (underWay.get(projection) ?? underWay.set(projection, new Map()).get(projection)!).set(key, entry);
      try {
        await committer.commit(plans);
        checkpoints?.committedElsewhere();
      } catch (error) {
        dropped++; // with its documents, below, in this same turn: a read cannot see one without the other
        throw error;
      } finally {
        // answered in the order they were posted: this one is its projection's first under way
        for (const { projection } of commits) {
          const chain = chains.get(projection)!;
          chain.expects.shift();
          if (chain.expects.length === 0) chains.delete(projection);
        }
        // a later commit's document for the same key stays (unless it is the same text: then the store holds it)
        for (const { projection, key, text } of entries) if (underWay.get(projection)?.get(key)?.text === text) underWay.get(projection)!.delete(key);
      }
    },
    async reset(projection) {
      await write(() => resetReadModels.immediate(projection));
    },
    /**
     * synchronous=OFF (no sync at checkpoints either: ~⅔ of a rebuild's commit time) behind a
     * durable mark of this boot; every commit of this connection meanwhile goes unsynced (webhook
     * delivery states too: a power loss in the window rebuilds the file, see docs/stores.md).
     */
    async bulk(work) {
      if (!boot) return work();
      const opens = !unsynced;
      if (unsynced) unsynced.depth++;
      else {
        unsynced = { mark: markUnsynced(path, boot), depth: 1, reindex: () => undefined };
        rm.pragma("synchronous = OFF");
        checkpoints?.onTheLoop();
      }
      const window = unsynced;
      try {
        // the tables it fills from empty take their indexes at the end (prepare() makes them again after a crash)
        if (opens) window.reindex = await write(() => tables.withoutIndexes());
        return await work();
      } finally {
        if (--window.depth === 0) {
          unsynced = undefined;
          try {
            if (rm.open) await write(window.reindex);
          } finally {
            // closed meanwhile: its writes are the OS's already, synced by path all the same
            if (rm.open) {
              rm.pragma("synchronous = NORMAL");
              checkpoints?.offTheLoop();
            }
            syncAndUnmark(path, window.mark);
          }
        }
      }
    },
    close,
  };
}
