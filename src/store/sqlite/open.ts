// Opening a SQLite file (pragmas, numbered migrations under PRAGMA user_version) and the lock rules
// every write follows. better-sqlite3 is synchronous: SQLite's own wait for another process's lock
// blocks the event loop, so it is kept short (LOCK_WAIT_MS) and longer waits are retries (write()).
import Database from "better-sqlite3";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { StoreUnavailable } from "../port/unavailable.js";
import { loadMigrations } from "../migrations.js";

/** How long SQLite itself waits for a lock, blocking the process (ms); longer waits are retries (write()). */
export const LOCK_WAIT_MS = 20;

export const isBusy = (e: unknown) => /^SQLITE_(BUSY|LOCKED)/.test((e as { code?: string })?.code ?? "");
/** The disk is full or failed: nothing of the write is durable, and it may work again once an operator acts. */
const diskFailed = (e: unknown) => /^SQLITE_(FULL|IOERR)/.test((e as { code?: string })?.code ?? "");
/** Busy past the bound, or a full or failing disk, becomes StoreUnavailable (503, retry); anything else stays as it is. */
export const translated = (e: unknown) =>
  isBusy(e)
    ? new StoreUnavailable("another process holds the SQLite write lock", { cause: e })
    : diskFailed(e)
      ? new StoreUnavailable(`the SQLite store cannot be written: ${(e as Error).message}`, { cause: e })
      : e;

export interface OpenOptions {
  /** Directory of numbered migration files (./migrations/<file>/), applied in order; user_version counts them. */
  migrations: URL;
  synchronous: "FULL" | "NORMAL";
  /** Applies when the file is created (journal_mode=WAL fixes it from then on). */
  pageSize?: number;
}

/**
 * A store's file that cannot be opened as one: the message names the file, what it is to the store
 * (`role`) and what is wrong with it, so a damaged read models' file is not blamed on the events.
 */
export class StoreFileUnusable extends Error {
  override readonly name = "StoreFileUnusable";
}

const unusable: Record<string, string> = {
  EISDIR: "is a directory, not a SQLite file",
  SQLITE_NOTADB: "is not a SQLite database",
  SQLITE_CORRUPT: "is damaged",
  EACCES: "cannot be opened",
  EPERM: "cannot be opened",
  // its directory cannot be made: a file has that name (DATA_DIR given a file), or a parent's
  EEXIST: "cannot be opened: a file is in the way of its directory",
  ENOTDIR: "cannot be opened: a file is in the way of its directory",
  SQLITE_CANTOPEN: "cannot be opened",
  SQLITE_READONLY: "cannot be written",
  // another process held the file's write lock for the whole of the start's wait
  SQLITE_BUSY: "is locked by another process",
  SQLITE_LOCKED: "is locked by another process",
};

export function openDatabase(path: string, busyTimeoutMs: number, options: OpenOptions & { role: string }): Database.Database {
  try {
    return openFile(path, busyTimeoutMs, options);
  } catch (error) {
    const { code = "", message } = error as { code?: string; message: string };
    const what = unusable[code] ?? unusable[code.replace(/_[A-Z]+$/, "")];
    if (!what) throw error;
    // node's own message repeats the path ("EISDIR: illegal operation on a directory, open '/tmp'")
    throw new StoreFileUnusable(`${path} (${options.role}) ${what}${code === "EISDIR" ? "" : ` (${code.startsWith("E") ? code : message})`}${isBusy(error) ? waited(busyTimeoutMs) : ""}`, { cause: error });
  }
}

const waited = (busyTimeoutMs: number) => `, still after ${busyTimeoutMs / 1000} s of waiting for its write lock`;

function openFile(path: string, busyTimeoutMs: number, { migrations, synchronous, pageSize }: OpenOptions): Database.Database {
  // private: the directory 0700 and the file 0600 when created here (SQLite gives its -wal and
  // -shm files the database file's mode); an existing database is tightened to 0600 too (not
  // another program's file, which the open below refuses)
  if (path !== ":memory:") {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const fd = openSync(path, "a+", 0o600);
    try {
      if (isSqliteOrEmpty(fd)) chmodSync(path, 0o600);
    } finally {
      closeSync(fd);
    }
  }
  const db = new Database(path, { timeout: busyTimeoutMs });
  if (pageSize) db.pragma(`page_size = ${pageSize}`);
  walMode(db, busyTimeoutMs);
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma("foreign_keys = ON");
  const steps = loadMigrations(migrations);
  db.transaction(() => {
    const done = db.pragma("user_version", { simple: true }) as number;
    for (const step of steps.slice(done)) db.exec(step.sql);
    db.pragma(`user_version = ${Math.max(done, steps.length)}`);
  }).immediate();
  // Opening may block (nothing is served yet); from now on lock waits are retries (write()).
  db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
  return db;
}

const SQLITE_HEADER = Buffer.from("SQLite format 3\0");

/** A file SQLite will take as a database: one it made, or an empty one it will make one of. */
function isSqliteOrEmpty(fd: number): boolean {
  const head = Buffer.alloc(SQLITE_HEADER.length);
  const read = readSync(fd, head, 0, head.length, 0);
  return read === 0 || head.equals(SQLITE_HEADER);
}

/**
 * Sets WAL mode (kept by the file from then on). Converting a new file needs its locks, and SQLite
 * runs no busy handler for that: while another process held the file's write lock (opening the same
 * new file at the same moment: two servers started together on an empty DATA_DIR), the pragma failed
 * at once with "database is locked". Tried again, pausing (opening may block: nothing is served
 * yet), until busyTimeoutMs.
 */
export function walMode(db: Database.Database, busyTimeoutMs: number) {
  const deadline = Date.now() + busyTimeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let pauseMs = 1; ; pauseMs = Math.min(2 * pauseMs, 50)) {
    try {
      return void db.pragma("journal_mode = WAL"); // (":memory:" answers "memory": no WAL there)
    } catch (error) {
      if (!isBusy(error) || Date.now() > deadline) throw error;
    }
    Atomics.wait(pause, 0, 0, pauseMs);
  }
}

/**
 * Part of opening, like the migrations: `work` under the events' write lock (one process at a
 * time), waiting for the other processes' locks up to busyTimeoutMs.
 */
export function underEventsLock(db: Database.Database, others: readonly Database.Database[], busyTimeoutMs: number, work: () => void) {
  const waitFor = (ms: number) => [db, ...others].forEach((d) => d.pragma(`busy_timeout = ${ms}`));
  waitFor(busyTimeoutMs);
  try {
    db.transaction(work).immediate();
  } catch (error) {
    if (!isBusy(error)) throw error;
    throw new StoreFileUnusable(`${db.name} (the event store) is locked by another process (${(error as Error).message})${waited(busyTimeoutMs)}`, { cause: error });
  } finally {
    waitFor(LOCK_WAIT_MS);
  }
}

/**
 * A write outside the group commit, retried while another process holds the lock, with pauses that
 * leave the event loop free, up to busyTimeoutMs; then StoreUnavailable (503).
 */
export function retryingWrites(busyTimeoutMs: number) {
  return async function write<T>(work: () => T): Promise<T> {
    const deadline = Date.now() + busyTimeoutMs;
    for (let pauseMs = 5; ; pauseMs = Math.min(2 * pauseMs, 100)) {
      try {
        return work();
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw translated(error);
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  };
}

export type Write = ReturnType<typeof retryingWrites>;

/**
 * What a path holds, for commands that only read (they never create a store) and before a store is
 * made there: nothing, an empty file or a database with no table yet (a store's first open would
 * make it one, or is making it), a SQLite database without cardflow's events table (another
 * program's: opening it would add cardflow's tables to it), or a store. A file SQLite cannot
 * read counts as a store here: its opening then says why.
 */
export function sqliteStoreAt(path: string): "none" | "empty" | "foreign" | "store" {
  if (!existsSync(path)) return "none";
  if (!statSync(path).isFile()) return "store";
  if (statSync(path).size === 0) return "empty";
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      // no table yet: a store another process is making (its tables come in one transaction), or an empty database
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
      return tables.includes("events") ? "store" : tables.length === 0 ? "empty" : "foreign";
    } finally {
      db.close();
    }
  } catch {
    return "store";
  }
}

/**
 * Why no store is at `path`, for a refusal: null when one is; "" when nothing is there; else what
 * the file is (one look at it: a refusal's message does not open the file again).
 */
export function missingSqliteStore(path: string): string | null {
  const found = sqliteStoreAt(path);
  return found === "store" ? null : found === "empty" ? "the file is empty" : found === "foreign" ? "the file is a SQLite database without cardflow's events: another program's?" : "";
}
