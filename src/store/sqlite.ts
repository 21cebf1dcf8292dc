// SQLite adapter (better-sqlite3): the embedded default, one database file holding events,
// idempotency records and read models.
//
// Durability: WAL with synchronous=FULL, so a commit returns only after the WAL is fsynced, and an
// append's promise resolves only after its transaction committed. Read-model commits alone use
// synchronous=NORMAL: they are rebuilt from the events (docs/stores.md).
//
// Group commit: better-sqlite3 is synchronous, so append() only queues the request and schedules a
// flush with setImmediate. Every append that arrives before the flush runs (callers that were
// woken by the previous commit, requests that came in while it was written) is written in one
// transaction and one fsync. Each append runs inside its own SAVEPOINT: a failed expected-revision
// check rolls back that append alone and rejects only its promise.
//
// Several processes may open the same file: SQLite serialises writers (BEGIN IMMEDIATE waits up to
// busy_timeout), positions are the rowid assigned inside the write transaction, so they commit in
// order and a reader never sees a gap that fills later. Subscribers notice other processes' appends
// by polling (pollMs).
import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import {
  checkCheckpoint,
  checkExpectedRevision,
  type AppendOptions,
  type AppendResult,
  type EventData,
  type EventStore,
  type IdempotencyRecord,
  type ProjectionCommit,
  type ReadModelStore,
} from "./port.js";
import { createPump } from "./pump.js";
import { sharedConnection, streamRange, toRecorded, type EventRow } from "./sql.js";

export interface SqliteStoreOptions {
  /** Database file; its directory is created when missing. */
  path: string;
  /** How often subscribers look for appends made by other processes (ms). Default 100. */
  pollMs?: number;
  /** How long a writer waits for another process's write lock (ms). Default 10,000. */
  busyTimeoutMs?: number;
  /** Called after each group commit with the number of appends it carried (metrics, tests). */
  onCommit?: (appends: number) => void;
}

/**
 * One database, two ports. Each of `events` and `readModels` must be closed; the file is closed
 * when both are.
 */
export interface SqliteStore {
  events: EventStore;
  readModels: ReadModelStore;
}

// Versioned migrations, applied in order; PRAGMA user_version records how many ran.
const MIGRATIONS = [
  `CREATE TABLE events (
     position INTEGER PRIMARY KEY,          -- rowid: assigned in commit order by the single writer
     stream   TEXT NOT NULL,
     revision INTEGER NOT NULL,
     id       TEXT NOT NULL UNIQUE,
     type     TEXT NOT NULL,
     version  INTEGER NOT NULL,
     data     TEXT NOT NULL,
     metadata TEXT NOT NULL,
     UNIQUE (stream, revision)
   );
   CREATE TABLE idempotency (
     key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, status INTEGER NOT NULL,
     body TEXT NOT NULL, expires_at TEXT NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX idempotency_expiry ON idempotency (expires_at);
   CREATE TABLE read_models (
     projection TEXT NOT NULL, key TEXT NOT NULL, doc TEXT NOT NULL,
     PRIMARY KEY (projection, key)
   ) WITHOUT ROWID;
   CREATE TABLE checkpoints (projection TEXT PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID;`,
  // Documents are ~1-3 KB: a rowid table keeps them out of the key B-tree (WITHOUT ROWID suits
  // small rows only), which makes a projection rebuild's upserts ~1.5x faster.
  `CREATE TABLE read_models_v2 (
     projection TEXT NOT NULL, key TEXT NOT NULL, doc TEXT NOT NULL,
     PRIMARY KEY (projection, key)
   );
   INSERT INTO read_models_v2 (projection, key, doc) SELECT projection, key, doc FROM read_models;
   DROP TABLE read_models;
   ALTER TABLE read_models_v2 RENAME TO read_models;`,
];

function openDatabase(path: string, busyTimeoutMs: number): Database.Database {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { timeout: busyTimeoutMs });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  db.transaction(() => {
    const done = db.pragma("user_version", { simple: true }) as number;
    for (let v = done; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]!);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
  return db;
}

interface Pending {
  stream: string;
  events: EventData[];
  options: AppendOptions;
  resolve(r: AppendResult): void;
  reject(e: unknown): void;
}

export function createSqliteStore({ path, pollMs = 100, busyTimeoutMs = 10_000, onCommit }: SqliteStoreOptions): SqliteStore {
  const db = openDatabase(path, busyTimeoutMs);
  const q = {
    byId: db.prepare<[string], { stream: string; revision: number; position: number }>("SELECT stream, revision, position FROM events WHERE id = ?"),
    last: db.prepare<[string], { revision: number | null }>("SELECT max(revision) AS revision FROM events WHERE stream = ?"),
    head: db.prepare<[], { position: number | null }>("SELECT max(position) AS position FROM events"),
    insert: db.prepare("INSERT INTO events (stream, revision, id, type, version, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)"),
    forwards: db.prepare<[string, number, number], EventRow>("SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?"),
    backwards: db.prepare<[string, number, number], EventRow>("SELECT * FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?"),
    all: db.prepare<[number, number], EventRow>("SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?"),
    saveIdem: db.prepare("INSERT OR REPLACE INTO idempotency (key, fingerprint, status, body, expires_at) VALUES (?, ?, ?, ?, ?)"),
    readIdem: db.prepare<[string], { key: string; fingerprint: string; status: number; body: string; expires_at: string }>("SELECT * FROM idempotency WHERE key = ?"),
    purgeIdem: db.prepare("DELETE FROM idempotency WHERE expires_at < ?"),
    checkpoint: db.prepare<[string], { position: number }>("SELECT position FROM checkpoints WHERE projection = ?"),
    setCheckpoint: db.prepare("INSERT INTO checkpoints (projection, position) VALUES (?, ?) ON CONFLICT (projection) DO UPDATE SET position = excluded.position"),
    getDoc: db.prepare<[string, string], { doc: string }>("SELECT doc FROM read_models WHERE projection = ? AND key = ?"),
    // The keys come as one JSON array parameter: one statement for a whole batch, whatever its size.
    getDocs: db.prepare<[string, string], { key: string; doc: string }>(
      "SELECT key, doc FROM read_models WHERE projection = ? AND key IN (SELECT value FROM json_each(?))",
    ),
    // key >= prefix narrows through the primary key; substr keeps the match literal (no LIKE wildcards).
    listDocs: db.prepare<[string, string, string, string], { doc: string }>(
      "SELECT doc FROM read_models WHERE projection = ? AND key >= ? AND substr(key, 1, length(?)) = ? ORDER BY key",
    ),
    countDocs: db.prepare<[string], { n: number }>("SELECT count(*) AS n FROM read_models WHERE projection = ?"),
    putDoc: db.prepare("INSERT INTO read_models (projection, key, doc) VALUES (?, ?, ?) ON CONFLICT (projection, key) DO UPDATE SET doc = excluded.doc"),
    resetDocs: db.prepare("DELETE FROM read_models WHERE projection = ?"),
    resetCheckpoint: db.prepare("DELETE FROM checkpoints WHERE projection = ?"),
  };

  const saveIdempotency = (r: IdempotencyRecord) => q.saveIdem.run(r.key, r.fingerprint, r.status, JSON.stringify(r.body), r.expires_at);

  /** One append inside the open transaction; throws WrongExpectedRevision before writing anything. */
  function applyAppend({ stream, events, options }: Pending): AppendResult {
    const first = events[0] && q.byId.get(events[0].id);
    if (first && first.stream === stream) {
      const last = q.byId.get(events[events.length - 1]!.id) ?? first;
      return { nextRevision: last.revision, position: last.position };
    }
    const current = q.last.get(stream)?.revision ?? -1;
    checkExpectedRevision(stream, options.expectedRevision, current);
    if (events.length === 0) return { nextRevision: current, position: q.head.get()?.position ?? 0 };
    let position = 0;
    events.forEach((e, i) => {
      position = Number(q.insert.run(stream, current + 1 + i, e.id, e.type, e.version, JSON.stringify(e.data), JSON.stringify(e.metadata)).lastInsertRowid);
    });
    if (options.idempotency) saveIdempotency(options.idempotency);
    return { nextRevision: current + events.length, position };
  }

  let queue: Pending[] = [];
  let scheduled = false;

  function flush() {
    scheduled = false;
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    const outcomes: Array<{ ok: true; result: AppendResult } | { ok: false; error: unknown }> = [];
    try {
      db.exec("BEGIN IMMEDIATE");
      for (const p of batch) {
        db.exec("SAVEPOINT append");
        try {
          outcomes.push({ ok: true, result: applyAppend(p) });
          db.exec("RELEASE append");
        } catch (error) {
          db.exec("ROLLBACK TO append; RELEASE append");
          outcomes.push({ ok: false, error });
        }
      }
      db.exec("COMMIT");
      onCommit?.(batch.length);
    } catch (error) {
      // BEGIN or COMMIT failed (busy, disk full, closed): nothing of the batch is durable.
      if (db.inTransaction) db.exec("ROLLBACK");
      for (const p of batch) p.reject(error);
      return;
    }
    batch.forEach((p, i) => {
      const o = outcomes[i]!;
      if (o.ok) p.resolve(o.result);
      else p.reject(o.error);
    });
    if (outcomes.some((o) => o.ok)) pump.notify();
  }

  const readAllSync = (after: number, maxCount: number) => q.all.all(after, maxCount).map(toRecorded);
  const pump = createPump(async (after, maxCount) => (db.open ? readAllSync(after, maxCount) : []), { pollMs });

  const release = sharedConnection(() => void db.close());
  let eventsClosed = false;

  const events: EventStore = {
    append(stream, events, options) {
      if (eventsClosed) return Promise.reject(new Error("SQLite event store is closed"));
      return new Promise<AppendResult>((resolve, reject) => {
        queue.push({ stream, events, options, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    async readStream(stream, options) {
      const { forwards, from, maxCount } = streamRange(options);
      return (forwards ? q.forwards : q.backwards).all(stream, from, maxCount).map(toRecorded);
    },
    async readAll({ after = 0, maxCount = Number.MAX_SAFE_INTEGER } = {}) {
      return readAllSync(after, maxCount);
    },
    subscribeToAll(options, onEvent) {
      return pump.subscribe(options, onEvent);
    },
    async saveIdempotency(record) {
      saveIdempotency(record);
    },
    async readIdempotency(key) {
      const r = q.readIdem.get(key);
      return r && { key: r.key, fingerprint: r.fingerprint, status: r.status, body: JSON.parse(r.body), expires_at: r.expires_at };
    },
    async purgeIdempotency(now) {
      return q.purgeIdem.run(now).changes;
    },
    close: release(async () => {
      eventsClosed = true;
      await pump.closeAll();
      // Appends already queued are still written before the file closes.
      if (scheduled) flush();
    }),
  };

  // Run with .immediate(): checkpoints are read under the write lock, so the checks hold across processes.
  // A failed check throws out of the transaction, which rolls back every projection's writes.
  const commitReadModels = db.transaction((commits: readonly ProjectionCommit[]) => {
    for (const { projection, docs, checkpoint, expectedCheckpoint } of commits) {
      checkCheckpoint(projection, expectedCheckpoint, q.checkpoint.get(projection)?.position ?? 0);
      for (const { key, doc } of docs) q.putDoc.run(projection, key, JSON.stringify(doc));
      q.setCheckpoint.run(projection, checkpoint);
    }
  });
  const resetReadModels = db.transaction((projection: string) => {
    q.resetDocs.run(projection);
    q.resetCheckpoint.run(projection);
  });

  const readModels: ReadModelStore = {
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
    async list<T>(projection: string, keyPrefix: string) {
      return q.listDocs.all(projection, keyPrefix, keyPrefix, keyPrefix).map((r) => JSON.parse(r.doc) as T);
    },
    async count(projection) {
      return q.countDocs.get(projection)!.n;
    },
    async commitBatch(commits) {
      // Read models are rebuilt from the events, so their commits skip the fsync (docs/stores.md):
      // atomic still, and made durable by the next event append's fsync of the same WAL.
      db.pragma("synchronous = NORMAL");
      try {
        commitReadModels.immediate(commits);
      } finally {
        db.pragma("synchronous = FULL");
      }
    },
    async reset(projection) {
      resetReadModels.immediate(projection);
    },
    close: release(),
  };

  return { events, readModels };
}
