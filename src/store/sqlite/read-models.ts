// The read models' file: documents and checkpoints on a connection of their own, committed with
// synchronous=NORMAL (rebuilt from the events, docs/stores.md); a bulk catch-up from zero commits
// with synchronous=OFF behind a durable mark (./unsynced.ts).
import type Database from "better-sqlite3";
import { checkCheckpoint, type ListPage, type ProjectionCommit, type ReadModelStore } from "../port/read-models.js";
import type { Write } from "./open.js";
import { bootId, markUnsynced, syncAndUnmark } from "./unsynced.js";

export function sqliteReadModels(rm: Database.Database, path: string, write: Write, close: () => Promise<void>): ReadModelStore {
  const q = {
    checkpoint: rm.prepare<[string], { position: number }>("SELECT position FROM checkpoints WHERE projection = ?"),
    setCheckpoint: rm.prepare("INSERT INTO checkpoints (projection, position) VALUES (?, ?) ON CONFLICT (projection) DO UPDATE SET position = excluded.position"),
    getDoc: rm.prepare<[string, string], { doc: string }>("SELECT doc FROM read_models WHERE projection = ? AND key = ?"),
    // The keys come as one JSON array parameter: one statement for a whole batch, whatever its size.
    getDocs: rm.prepare<[string, string], { key: string; doc: string }>(
      "SELECT key, doc FROM read_models WHERE projection = ? AND key IN (SELECT value FROM json_each(?))",
    ),
    // key >= prefix narrows through the primary key; substr keeps the match literal (no LIKE wildcards).
    listDocs: rm.prepare<[string, string, string, string, string, number], { doc: string }>(
      "SELECT doc FROM read_models WHERE projection = ? AND key >= ? AND substr(key, 1, length(?)) = ? AND key > ? ORDER BY key LIMIT ?",
    ),
    countDocs: rm.prepare<[string], { n: number }>("SELECT count(*) AS n FROM read_models WHERE projection = ?"),
    putDoc: rm.prepare("INSERT INTO read_models (projection, key, doc) VALUES (?, ?, ?) ON CONFLICT (projection, key) DO UPDATE SET doc = excluded.doc"),
    resetDocs: rm.prepare("DELETE FROM read_models WHERE projection = ?"),
    resetCheckpoint: rm.prepare("DELETE FROM checkpoints WHERE projection = ?"),
  };

  // Run with .immediate(): checkpoints are read under the write lock, so the checks hold across processes.
  // A failed check throws out of the transaction, which rolls back every projection's writes.
  const commitReadModels = rm.transaction((commits: readonly ProjectionCommit[]) => {
    for (const { projection, docs, checkpoint, expectedCheckpoint } of commits) {
      checkCheckpoint(projection, expectedCheckpoint, q.checkpoint.get(projection)?.position ?? 0);
      for (const { key, doc } of docs) q.putDoc.run(projection, key, JSON.stringify(doc));
      q.setCheckpoint.run(projection, checkpoint);
    }
  });
  const resetReadModels = rm.transaction((projection: string) => {
    q.resetDocs.run(projection);
    q.resetCheckpoint.run(projection);
  });

  /** The open bulk window of this connection: its mark and how many bulk() calls are inside it. */
  let unsynced: { mark: string; depth: number } | undefined;
  const boot = path === ":memory:" ? null : bootId();

  return {
    async checkpoint(projection) {
      return q.checkpoint.get(projection)?.position ?? 0;
    },
    async get<T>(projection: string, key: string) {
      const row = q.getDoc.get(projection, key);
      return row && (JSON.parse(row.doc) as T);
    },
    async getMany<T>(projection: string, keys: readonly string[]) {
      const found = new Map<string, T>();
      if (keys.length > 0) for (const r of q.getDocs.all(projection, JSON.stringify(keys))) found.set(r.key, JSON.parse(r.doc) as T);
      return found;
    },
    async list<T>(projection: string, keyPrefix: string, { after = "", limit = -1 }: ListPage = {}) {
      return q.listDocs.all(projection, keyPrefix, keyPrefix, keyPrefix, after, limit).map((r) => JSON.parse(r.doc) as T);
    },
    async count(projection) {
      return q.countDocs.get(projection)!.n;
    },
    async commitBatch(commits) {
      // The read models' file commits with synchronous=NORMAL (no fsync; docs/stores.md): atomic
      // still, the documents with their checkpoint.
      await write(() => commitReadModels.immediate(commits));
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
      if (unsynced) unsynced.depth++;
      else {
        unsynced = { mark: markUnsynced(path, boot), depth: 1 };
        rm.pragma("synchronous = OFF");
      }
      try {
        return await work();
      } finally {
        if (--unsynced.depth === 0) {
          const { mark } = unsynced;
          unsynced = undefined;
          // closed meanwhile: its writes are the OS's already, synced by path all the same
          if (rm.open) rm.pragma("synchronous = NORMAL");
          syncAndUnmark(path, mark);
        }
      }
    },
    close,
  };
}
