// SQLite adapter (better-sqlite3): the embedded default. Two database files: one holds events,
// idempotency records and sequences; the read models (documents and checkpoints) live in a file of
// their own next to it (readModelsPath), so their bulk never goes through the events' WAL.
//
// Durability: the events' file uses WAL with synchronous=FULL, so a commit returns only after the
// WAL is fsynced, and an append's promise resolves only after its transaction committed
// (./append.ts: group commit). The read models' file uses synchronous=NORMAL (./read-models.ts).
//
// Several processes may open the same file: SQLite serialises writers (a write waits for another
// process's lock up to busyTimeoutMs without blocking the event loop, then StoreUnavailable).
// Subscribers notice other processes' appends by polling (pollMs).
import type { EventStore } from "../port.js";
import type { ReadModelStore } from "../port/read-models.js";
import { createPump } from "../pump.js";
import { sharedConnection } from "../sql.js";
import { sqliteAppender } from "./append.js";
import { checkpointOffTheLoop } from "./checkpoints.js";
import { committerOffTheLoop } from "./committer.js";
import { moveReadModels, readModelsPath, settleReadModels } from "./files.js";
import { sqliteIdempotency } from "./idempotency.js";
import { sqliteSequences } from "./ids.js";
import { openDatabase, retryingWrites, sqliteStoreAt, StoreFileUnusable } from "./open.js";
import { sqliteReads } from "./read.js";
import { sqliteReadModels } from "./read-models.js";

export { readModelsPath } from "./files.js";

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

/**
 * Two databases, two ports. Each of `events` and `readModels` must be closed: the read models'
 * file closes with its port, the events' file when both are closed.
 */
export interface SqliteStore {
  events: EventStore;
  readModels: ReadModelStore;
}

// The read models' file. Its pages are 16 KB: documents of 1-3 KB took a 4 KB page each (two do
// not fit), so a rebuild wrote twice their bytes through the WAL and the checkpoints' fsyncs.
const READ_MODEL_PAGE_SIZE = 16_384;

export function createSqliteStore({ path, pollMs = 100, busyTimeoutMs = 5_000, onCommit }: SqliteStoreOptions): SqliteStore {
  // another program's database is not made a store: cardflow's tables would be added to it
  if (path !== ":memory:" && sqliteStoreAt(path) === "foreign") {
    throw new StoreFileUnusable(`${path} is a SQLite database without cardflow's events (another program's?): nothing was written to it; give the store a file of its own`);
  }
  const db = openDatabase(path, busyTimeoutMs, { migrations: new URL("./migrations/events/", import.meta.url), synchronous: "FULL", role: "the event store" });
  const rmPath = readModelsPath(path);
  let rm: ReturnType<typeof openDatabase> | undefined;
  try {
    settleReadModels(db, rmPath, busyTimeoutMs);
    rm = openDatabase(rmPath, busyTimeoutMs, { migrations: new URL("./migrations/read-models/", import.meta.url), synchronous: "NORMAL", pageSize: READ_MODEL_PAGE_SIZE, role: "the read models' file" });
    moveReadModels(db, rm, busyTimeoutMs);
  } catch (error) {
    rm?.close();
    db.close();
    throw error;
  }
  // WAL checkpoints in a worker thread (./checkpoints.ts). A bulk catch-up checkpoints on its own
  // connection, unsynced, every 100 pages (1.6 MB at 16 KB pages: SQLite's 1,000 copied 16 MB at once).
  const onDisk = path !== ":memory:";
  const eventsCheckpoints = onDisk ? checkpointOffTheLoop(db, path, 1_000) : undefined;
  const rmCheckpoints = onDisk ? checkpointOffTheLoop(rm, rmPath, 100) : undefined;
  // and the read models' commits in a worker of their own (./committer.ts)
  const rmCommitter = onDisk ? committerOffTheLoop(rmPath, busyTimeoutMs) : undefined;

  const write = retryingWrites(busyTimeoutMs);
  const reads = sqliteReads(db);
  const pump = createPump(async (after, maxCount) => (db.open ? reads.readAllSync(after, maxCount) : []), { pollMs });
  const { replaceClaim, ...idempotency } = sqliteIdempotency(db, write);
  const appender = sqliteAppender(db, {
    busyTimeoutMs,
    replaceClaim,
    onCommit(appends, wrote) {
      onCommit?.(appends);
      if (wrote) pump.notify();
    },
  });
  const release = sharedConnection(async () => {
    await eventsCheckpoints?.close();
    db.close();
  });

  const events: EventStore = {
    append: appender.append,
    changeMark: appender.changeMark,
    readStream: reads.readStream,
    readAll: reads.readAll,
    head: reads.head,
    subscribeToAll: (options, onEvent) => pump.subscribe(options, onEvent),
    ...idempotency,
    ...sqliteSequences(db, write),
    close: release(async () => {
      // Appends already queued are still written before the file closes.
      appender.close();
      await pump.closeAll();
    }),
  };
  const readModels = sqliteReadModels(
    rm,
    rmPath,
    write,
    release(async () => {
      await rmCommitter?.close();
      await rmCheckpoints?.close();
      rm.close();
    }),
    rmCheckpoints && rmCommitter && { checkpoints: rmCheckpoints, committer: rmCommitter },
  );
  return { events, readModels };
}
