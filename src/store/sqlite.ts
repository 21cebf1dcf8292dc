// SQLite adapter (better-sqlite3): the embedded default. Two database files: one holds events,
// idempotency records and sequences; the read models (documents and checkpoints) live in a file of
// their own next to it (readModelsPath), so their bulk never goes through the events' WAL.
//
// Durability: the events' file uses WAL with synchronous=FULL, so a commit returns only after the
// WAL is fsynced, and an append's promise resolves only after its transaction committed. The read
// models' file uses synchronous=NORMAL: they are rebuilt from the events (docs/stores.md); a bulk
// catch-up from zero commits them with synchronous=OFF behind a durable mark (./unsynced.ts).
//
// Group commit: better-sqlite3 is synchronous, so append() only queues the request and schedules a
// flush with setImmediate. Every append that arrives before the flush runs (callers that were
// woken by the previous commit, requests that came in while it was written) is written in one
// transaction and one fsync. The batch's checks (retried ids, ids stored in another stream,
// expected revisions, idempotency claims) are made in memory against one lookup of its ids and one
// of its streams' heads, before its events are inserted: a failed check writes nothing of its
// append and rejects only its promise.
//
// Several processes may open the same file: SQLite serialises writers (a write waits for another
// process's lock up to busyTimeoutMs without blocking the event loop, then StoreUnavailable), positions are the rowid assigned inside the write transaction, so they commit in
// order and a reader never sees a gap that fills later. Subscribers notice other processes' appends
// by polling (pollMs).
import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { dirname, extname } from "node:path";
import {
  checkCheckpoint,
  checkExpectedRevision,
  IdempotencyClaimLost,
  StoreUnavailable,
  type AppendOptions,
  type AppendResult,
  type EventData,
  type EventStore,
  type IdempotencyRecord,
  type ListPage,
  type ProjectionCommit,
  type ReadModelStore,
} from "./port.js";
import { createPump } from "./pump.js";
import { RELEASED_SQL, sharedConnection, streamRange, toRecorded, type EventRow } from "./sql.js";
import { bootId, marksOf, markUnsynced, settleUnsynced, syncAndUnmark } from "./unsynced.js";

export interface SqliteStoreOptions {
  /** Database file; its directory is created when missing. */
  path: string;
  /** How often subscribers look for appends made by other processes (ms). Default 100. */
  pollMs?: number;
  /** How long a write waits for another process's write lock before it is refused with StoreUnavailable (ms). Default 5,000. */
  busyTimeoutMs?: number;
  /** Called after each group commit with the number of appends it carried (metrics, tests). */
  onCommit?: (appends: number) => void;
}

/** The read models' file of an events' file: `data/cardflow.sqlite` → `data/cardflow.read-models.sqlite`. */
export function readModelsPath(path: string): string {
  if (path === ":memory:") return path;
  const ext = extname(path);
  return `${path.slice(0, path.length - ext.length)}.read-models${ext}`;
}

/**
 * Two databases, two ports. Each of `events` and `readModels` must be closed: the read models'
 * file closes with its port, the events' file when both are closed.
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
  // Idempotency-Keys are claimed before the request runs (IdempotencyRecord): records written
  // before this are final answers.
  `ALTER TABLE idempotency ADD COLUMN token TEXT NOT NULL DEFAULT '';
   ALTER TABLE idempotency ADD COLUMN state TEXT NOT NULL DEFAULT 'done';`,
  // Named sequences (reserveIds): the next integer of each.
  `CREATE TABLE sequences (name TEXT PRIMARY KEY, next INTEGER NOT NULL) WITHOUT ROWID;`,
];

// The read models' file. Its pages are 16 KB: documents of 1-3 KB took a 4 KB page each (two do
// not fit), so a rebuild wrote twice their bytes through the WAL and the checkpoints' fsyncs.
// page_size applies when the file is created (journal_mode=WAL fixes it from then on).
const READ_MODEL_PAGE_SIZE = 16_384;
const READ_MODEL_MIGRATIONS = [
  // A rowid table keeps documents out of the key B-tree (WITHOUT ROWID suits small rows only).
  `CREATE TABLE read_models (
     projection TEXT NOT NULL, key TEXT NOT NULL, doc TEXT NOT NULL,
     PRIMARY KEY (projection, key)
   );
   CREATE TABLE checkpoints (projection TEXT PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID;`,
];

function openDatabase(
  path: string,
  busyTimeoutMs: number,
  { migrations = MIGRATIONS, synchronous = "FULL", pageSize }: { migrations?: readonly string[]; synchronous?: "FULL" | "NORMAL"; pageSize?: number } = {},
): Database.Database {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { timeout: busyTimeoutMs });
  if (pageSize) db.pragma(`page_size = ${pageSize}`);
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma("foreign_keys = ON");
  db.transaction(() => {
    const done = db.pragma("user_version", { simple: true }) as number;
    for (let v = done; v < migrations.length; v++) db.exec(migrations[v]!);
    db.pragma(`user_version = ${migrations.length}`);
  }).immediate();
  // Opening may block (nothing is served yet); from now on lock waits are retries (write()).
  db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
  return db;
}

/**
 * Part of opening, like the migrations: `work` under the events' write lock (one process at a
 * time), waiting for the other processes' locks up to busyTimeoutMs.
 */
function underEventsLock(db: Database.Database, others: readonly Database.Database[], busyTimeoutMs: number, work: () => void) {
  const waitFor = (ms: number) => [db, ...others].forEach((d) => d.pragma(`busy_timeout = ${ms}`));
  waitFor(busyTimeoutMs);
  try {
    db.transaction(work).immediate();
  } finally {
    waitFor(LOCK_WAIT_MS);
  }
}

/**
 * Files written before the read models had their own file keep them with the events: moved once,
 * documents and checkpoints together, under the events' write lock (one process moves them). A
 * crash after the copy and before the drop copies them again, over the first copy.
 */
function moveReadModels(db: Database.Database, rm: Database.Database, busyTimeoutMs: number) {
  const present = db.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('read_models', 'checkpoints')").pluck();
  if (present.get() === 0) return;
  underEventsLock(db, [rm], busyTimeoutMs, () => {
    if (present.get() === 0) return;
    const putDoc = rm.prepare("INSERT INTO read_models (projection, key, doc) VALUES (?, ?, ?)");
    const putCheckpoint = rm.prepare("INSERT INTO checkpoints (projection, position) VALUES (?, ?)");
    rm.transaction(() => {
      rm.exec("DELETE FROM read_models; DELETE FROM checkpoints;");
      for (const d of db.prepare<[], { projection: string; key: string; doc: string }>("SELECT projection, key, doc FROM read_models").iterate()) putDoc.run(d.projection, d.key, d.doc);
      for (const c of db.prepare<[], { projection: string; position: number }>("SELECT projection, position FROM checkpoints").all()) putCheckpoint.run(c.projection, c.position);
    }).immediate();
    db.exec("DROP TABLE read_models; DROP TABLE checkpoints;");
  });
}

/**
 * Before the read models' file is opened: marks of bulk catch-ups left by another boot discard it
 * (it may be corrupt; the runner rebuilds it from the events), under the events' write lock so
 * that no other process opens it meanwhile (./unsynced.ts).
 */
function settleReadModels(db: Database.Database, file: string, busyTimeoutMs: number) {
  if (file === ":memory:" || marksOf(file).length === 0) return;
  underEventsLock(db, [], busyTimeoutMs, () => void settleUnsynced(file, bootId()));
}

interface Pending {
  stream: string;
  events: EventData[];
  options: AppendOptions;
  resolve(r: AppendResult): void;
  reject(e: unknown): void;
  /** When it was queued (Date.now()): how long it has waited for the write lock. */
  since: number;
}

type Outcome = { ok: true; result: AppendResult } | { ok: false; error: unknown };

/** How long SQLite itself waits for a lock, blocking the process (ms); longer waits are retries (write()). */
const LOCK_WAIT_MS = 20;

const isBusy = (e: unknown) => /^SQLITE_(BUSY|LOCKED)/.test((e as { code?: string })?.code ?? "");
/** Busy past the bound becomes StoreUnavailable (503, retry); anything else stays as it is. */
const translated = (e: unknown) => (isBusy(e) ? new StoreUnavailable("another process holds the SQLite write lock", { cause: e }) : e);

interface IdempotencyRow {
  key: string;
  fingerprint: string;
  token: string;
  state: string;
  status: number;
  body: string;
  expires_at: string;
}

const idempotencyRow = (r: IdempotencyRecord) => [r.key, r.fingerprint, r.token, r.state, r.status, JSON.stringify(r.body), r.expires_at] as const;
const fromIdempotencyRow = (r: IdempotencyRow): IdempotencyRecord => ({ ...r, state: r.state === "in_flight" ? "in_flight" : "done", body: JSON.parse(r.body) });

export function createSqliteStore({ path, pollMs = 100, busyTimeoutMs = 5_000, onCommit }: SqliteStoreOptions): SqliteStore {
  const db = openDatabase(path, busyTimeoutMs);
  const q = {
    // A batch's lookups, each one statement for the whole batch (a JSON array parameter);
    // the subquery per stream seeks the end of its (stream, revision) index range.
    byIds: db.prepare<[string], { id: string; stream: string; revision: number; position: number }>(
      "SELECT id, stream, revision, position FROM events WHERE id IN (SELECT value FROM json_each(?))",
    ),
    lasts: db.prepare<[string], { stream: string; revision: number | null }>(
      "SELECT value AS stream, (SELECT max(revision) FROM events WHERE stream = value) AS revision FROM json_each(?)",
    ),
    head: db.prepare<[], { position: number | null }>("SELECT max(position) AS position FROM events"),
    insert: db.prepare("INSERT INTO events (stream, revision, id, type, version, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)"),
    forwards: db.prepare<[string, number, number], EventRow>("SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?"),
    backwards: db.prepare<[string, number, number], EventRow>("SELECT * FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?"),
    all: db.prepare<[number, number], EventRow>("SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?"),
    // The key's primary key refuses a second claimant; a record that no longer holds its key
    // (holdsKey in port.ts) is replaced in the same statement.
    claimIdem: db.prepare(
      `INSERT INTO idempotency (key, fingerprint, token, state, status, body, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET fingerprint = excluded.fingerprint, token = excluded.token, state = excluded.state,
         status = excluded.status, body = excluded.body, expires_at = excluded.expires_at
       WHERE ${RELEASED_SQL("idempotency", "?")}`,
    ),
    saveIdem: db.prepare("UPDATE idempotency SET fingerprint = ?, state = ?, status = ?, body = ?, expires_at = ? WHERE key = ? AND token = ?"),
    dropClaim: db.prepare("DELETE FROM idempotency WHERE key = ? AND token = ? AND state = 'in_flight' AND status = 0"),
    endClaim: db.prepare("UPDATE idempotency SET state = 'done', expires_at = ? WHERE key = ? AND token = ? AND state = 'in_flight'"),
    reserve: db.prepare<[string, number, number], { next: number }>(
      "INSERT INTO sequences (name, next) VALUES (?, 1 + ?) ON CONFLICT (name) DO UPDATE SET next = next + ? RETURNING next",
    ),
    readIdem: db.prepare<[string], IdempotencyRow>("SELECT * FROM idempotency WHERE key = ?"),
    purgeIdem: db.prepare(`DELETE FROM idempotency WHERE ${RELEASED_SQL("idempotency", "?")}`),
    // changes whenever another connection (another process) commits; this connection's own commits leave it
    dataVersion: db.prepare<[], number>("PRAGMA data_version").pluck(),
  };

  // Read models: their own file and connection, committed without fsync (rebuilt from the events).
  const rmPath = readModelsPath(path);
  settleReadModels(db, rmPath, busyTimeoutMs);
  const rm = openDatabase(rmPath, busyTimeoutMs, { migrations: READ_MODEL_MIGRATIONS, synchronous: "NORMAL", pageSize: READ_MODEL_PAGE_SIZE });
  // Checkpoints every 100 pages (1.6 MB at 16 KB pages), not SQLite's 1,000: a checkpoint runs on
  // the commit that crosses it, on the event loop, and with 16 KB pages the default one copied
  // 16 MB: webhook delivery p99 59 ms against 19 ms (scripts/bench/webhooks.ts); rebuilds pay ~10 %.
  rm.pragma("wal_autocheckpoint = 100");
  moveReadModels(db, rm, busyTimeoutMs);
  const rq = {
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

  /** Runs a write transaction that may skip the fsync (it can be rebuilt, or its loss loses nothing acknowledged). */
  function withoutFsync<T>(work: () => T): T {
    db.pragma("synchronous = NORMAL");
    try {
      return work();
    } finally {
      db.pragma("synchronous = FULL");
    }
  }

  const saveIdempotency = (r: IdempotencyRecord) => q.saveIdem.run(r.fingerprint, r.state, r.status, JSON.stringify(r.body), r.expires_at, r.key, r.token).changes > 0;

  /**
   * The batch inside the open transaction, in few statements: one lookup of its event ids already
   * stored (retries), one of its streams' last revisions, the checks in memory, then one INSERT per
   * event. Every check of an append comes before its first write, so a refused append writes
   * nothing and needs no savepoint (a savepoint journals every page the batch touches, past 64 KB
   * into a temporary file). Ids and heads are kept up to date as the batch is written, so a later
   * append of the same batch sees an earlier one. A statement that fails anyway throws: flush rolls
   * the whole batch back.
   */
  function applyBatch(batch: readonly Pending[]): Outcome[] {
    const stored = new Map(q.byIds.all(JSON.stringify(batch.flatMap((p) => p.events.map((e) => e.id)))).map((r) => [r.id, r]));
    const heads = new Map(q.lasts.all(JSON.stringify([...new Set(batch.map((p) => p.stream))])).map((r) => [r.stream, r.revision ?? -1]));
    return batch.map(({ stream, events, options }): Outcome => {
      const first = events[0] && stored.get(events[0].id);
      if (first && first.stream === stream) {
        const last = stored.get(events[events.length - 1]!.id) ?? first;
        return { ok: true, result: { nextRevision: last.revision, position: last.position } };
      }
      const current = heads.get(stream)!;
      try {
        checkExpectedRevision(stream, options.expectedRevision, current);
        const taken = events.find((e) => stored.has(e.id));
        if (taken) throw new Error(`append to ${stream}: event id ${taken.id} is already stored in stream ${stored.get(taken.id)!.stream}`);
        if (options.idempotency && !saveIdempotency(options.idempotency)) throw new IdempotencyClaimLost(options.idempotency.key);
      } catch (error) {
        return { ok: false, error };
      }
      if (events.length === 0) return { ok: true, result: { nextRevision: current, position: q.head.get()?.position ?? 0 } };
      let position = 0;
      events.forEach((e, i) => {
        const revision = current + 1 + i;
        position = Number(q.insert.run(stream, revision, e.id, e.type, e.version, JSON.stringify(e.data), JSON.stringify(e.metadata)).lastInsertRowid);
        stored.set(e.id, { id: e.id, stream, revision, position });
      });
      heads.set(stream, current + events.length);
      return { ok: true, result: { nextRevision: current + events.length, position } };
    });
  }

  let queue: Pending[] = [];
  let scheduled = false;
  /** Group commits of this connection (which data_version does not count): with it, changeMark(). */
  let commits = 0;

  function flush() {
    scheduled = false;
    if (queue.length === 0) return;
    try {
      db.exec("BEGIN IMMEDIATE");
    } catch (error) {
      // Another process holds the write lock: the queue waits (and grows) without blocking the
      // event loop, up to busyTimeoutMs for its oldest append, then every append is refused.
      if (isBusy(error) && Date.now() - queue[0]!.since < busyTimeoutMs) {
        scheduled = true;
        setTimeout(flush, 10);
        return;
      }
      const refused = queue;
      queue = [];
      for (const p of refused) p.reject(translated(error));
      return;
    }
    const batch = queue;
    queue = [];
    let outcomes: Outcome[];
    try {
      outcomes = applyBatch(batch);
      db.exec("COMMIT");
      commits++;
      onCommit?.(batch.length);
    } catch (error) {
      // a statement or the COMMIT failed (disk full, I/O error): nothing of the batch is durable
      if (db.inTransaction) db.exec("ROLLBACK");
      for (const p of batch) p.reject(translated(error));
      return;
    }
    batch.forEach((p, i) => {
      const o = outcomes[i]!;
      if (o.ok) p.resolve(o.result);
      else p.reject(o.error);
    });
    if (outcomes.some((o) => o.ok)) pump.notify();
  }

  /**
   * A write outside the group commit. SQLite's own wait for a lock blocks the whole process (the
   * driver is synchronous), so it is kept short (LOCK_WAIT_MS) and retried here with pauses that
   * leave the event loop free, up to busyTimeoutMs; then StoreUnavailable (503).
   */
  async function write<T>(work: () => T): Promise<T> {
    const deadline = Date.now() + busyTimeoutMs;
    for (let pauseMs = 5; ; pauseMs = Math.min(2 * pauseMs, 100)) {
      try {
        return work();
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw translated(error);
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }

  const readAllSync = (after: number, maxCount: number) => q.all.all(after, maxCount).map(toRecorded);
  const pump = createPump(async (after, maxCount) => (db.open ? readAllSync(after, maxCount) : []), { pollMs });

  const release = sharedConnection(() => void db.close());
  let eventsClosed = false;

  const events: EventStore = {
    append(stream, events, options) {
      if (eventsClosed) return Promise.reject(new Error("SQLite event store is closed"));
      return new Promise<AppendResult>((resolve, reject) => {
        queue.push({ stream, events, options, resolve, reject, since: Date.now() });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    changeMark: () => `${q.dataVersion.get()}:${commits}`,
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
    async claimIdempotency(claim, now) {
      for (;;) {
        // A claim need not wait for an fsync: were it lost, so would be everything written after it.
        const claimed = await write(() => withoutFsync(() => q.claimIdem.run(...idempotencyRow(claim), now).changes > 0));
        if (claimed) return undefined;
        const held = q.readIdem.get(claim.key);
        if (held) return fromIdempotencyRow(held);
        // released between the two statements: claim again
      }
    },
    async saveIdempotency(record) {
      return write(() => saveIdempotency(record));
    },
    async releaseIdempotency(key, token, expires_at) {
      await write(() =>
        db
          .transaction(() => {
            q.dropClaim.run(key, token);
            q.endClaim.run(expires_at, key, token);
          })
          .immediate(),
      );
    },
    async readIdempotency(key) {
      const r = q.readIdem.get(key);
      return r && fromIdempotencyRow(r);
    },
    async reserveIds(sequence, count) {
      return (await write(() => q.reserve.get(sequence, count, count)!)).next - count;
    },
    async purgeIdempotency(now) {
      return (await write(() => q.purgeIdem.run(now))).changes;
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
  const commitReadModels = rm.transaction((commits: readonly ProjectionCommit[]) => {
    for (const { projection, docs, checkpoint, expectedCheckpoint } of commits) {
      checkCheckpoint(projection, expectedCheckpoint, rq.checkpoint.get(projection)?.position ?? 0);
      for (const { key, doc } of docs) rq.putDoc.run(projection, key, JSON.stringify(doc));
      rq.setCheckpoint.run(projection, checkpoint);
    }
  });
  const resetReadModels = rm.transaction((projection: string) => {
    rq.resetDocs.run(projection);
    rq.resetCheckpoint.run(projection);
  });

  /** The open bulk window of this connection: its mark and how many bulk() calls are inside it. */
  let unsynced: { mark: string; depth: number } | undefined;
  const boot = rmPath === ":memory:" ? null : bootId();

  const readModels: ReadModelStore = {
    async checkpoint(projection) {
      return rq.checkpoint.get(projection)?.position ?? 0;
    },
    async get<T>(projection: string, key: string) {
      const row = rq.getDoc.get(projection, key);
      return row && (JSON.parse(row.doc) as T);
    },
    async getMany<T>(projection: string, keys: readonly string[]) {
      const found = new Map<string, T>();
      if (keys.length > 0) for (const r of rq.getDocs.all(projection, JSON.stringify(keys))) found.set(r.key, JSON.parse(r.doc) as T);
      return found;
    },
    async list<T>(projection: string, keyPrefix: string, { after = "", limit = -1 }: ListPage = {}) {
      return rq.listDocs.all(projection, keyPrefix, keyPrefix, keyPrefix, after, limit).map((r) => JSON.parse(r.doc) as T);
    },
    async count(projection) {
      return rq.countDocs.get(projection)!.n;
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
        unsynced = { mark: markUnsynced(rmPath, boot), depth: 1 };
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
          syncAndUnmark(rmPath, mark);
        }
      }
    },
    close: release(() => void rm.close()),
  };

  return { events, readModels };
}
