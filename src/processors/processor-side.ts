// What the simulated processors keep on their side: the ledger of calls, the terminals' collections
// in progress, the cards they read and the cards they keep on file. A real processor is one
// service that every cardflow process talks to; so that several `npm start` processes behind a load
// balancer see one sandbox processor (a card presented through one process completes the
// collection another started, a card saved through one is charged through another), the served
// simulators keep this in one SQLite file that the processes on a host share. It lives apart from
// cardflow's store: a test can kill cardflow and ask the processor what really happened.
import Database from "better-sqlite3";
import { chmodSync, closeSync, openSync } from "node:fs";
import { dirname, join } from "node:path";
import { setBounded } from "../bounded.js";
import { makeDataDirectory } from "../data-directory.js";
import { walMode } from "../store/sqlite/open.js";

/**
 * ledger: calls by idempotency key; sessions: collections by terminal; cards: numbers read, by
 * payment; vault: cards on file; attempts: authorizations per payment and card; settlements:
 * requested captures not yet reported settled; faults: the sandbox's injected processor faults
 * (./simulator.ts ProcessorFault, set by the chaos run).
 */
export type SideTable = "ledger" | "sessions" | "cards" | "vault" | "attempts" | "settlements" | "faults";

export interface ProcessorSide {
  get<T>(table: SideTable, key: string): T | undefined;
  set(table: SideTable, key: string, value: unknown): void;
  /**
   * Replaces a value by what `change` returns (undefined deletes it), atomically across the
   * processes sharing the file; answers the value before. A throw in `change` changes nothing.
   */
  change<T>(table: SideTable, key: string, change: (current: T | undefined) => T | undefined): T | undefined;
  entries<T>(table: SideTable): [string, T][];
  close(): void;
}

/** Where the served simulators keep their side: beside the store, so `cardflow reconcile` asks the same processor. */
export const processorSideIn = (dataDir: string) => join(dataDir, "simulators.sqlite");

/**
 * In memory, the calls, the cards read and the attempt counts are kept for the last this many (a
 * processor keeps idempotency keys for a retention window), so a long-running process stays flat.
 * Cards on file, collections in progress and settlements due are kept until they end.
 */
const RETAINED = 10_000;
const RETAINED_TABLES: ReadonlySet<SideTable> = new Set(["ledger", "cards", "attempts"]);

/** One process's processors (tests, embedders without a file): everything in memory. */
export function memorySide(): ProcessorSide {
  const tables = new Map<SideTable, Map<string, unknown>>();
  const table = (name: SideTable) => tables.get(name) ?? tables.set(name, new Map()).get(name)!;
  const set = (name: SideTable, key: string, value: unknown) => {
    if (value === undefined) table(name).delete(key);
    else setBounded(table(name), key, value, RETAINED_TABLES.has(name) ? RETAINED : Infinity);
  };
  return {
    get: <T>(name: SideTable, key: string) => table(name).get(key) as T | undefined,
    set,
    change<T>(name: SideTable, key: string, change: (current: T | undefined) => T | undefined) {
      const before = table(name).get(key) as T | undefined;
      set(name, key, change(before));
      return before;
    },
    entries: <T>(name: SideTable) => [...table(name).entries()] as [string, T][],
    close: () => tables.clear(),
  };
}

/** How long the side waits for another process's lock, at open and on each change (ms). */
const SIDE_LOCK_WAIT_MS = 5_000;

/**
 * The processors' side in a SQLite file shared by the processes of one host. Each write commits
 * before the processor answers; a change runs in an immediate transaction, so two processes
 * presenting a card on one terminal end it once.
 */
export function fileSide(file: string): ProcessorSide {
  // private like the store: directory 0700, file 0600 (its -wal and -shm take the file's mode)
  makeDataDirectory(dirname(file));
  closeSync(openSync(file, "a", 0o600));
  chmodSync(file, 0o600);
  const db = new Database(file, { timeout: SIDE_LOCK_WAIT_MS });
  walMode(db, SIDE_LOCK_WAIT_MS); // the processes of a host open it together (see walMode)
  // a write survives the cardflow process (a SIGKILL), as the processor's record must; a power
  // loss is the simulated processor's, not cardflow's: no fsync on the request path
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE IF NOT EXISTS side (tbl TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (tbl, key))");
  const read = db.prepare<[string, string], { value: string }>("SELECT value FROM side WHERE tbl = ? AND key = ?");
  const write = db.prepare<[string, string, string]>("INSERT INTO side (tbl, key, value) VALUES (?, ?, ?) ON CONFLICT (tbl, key) DO UPDATE SET value = excluded.value");
  const remove = db.prepare<[string, string]>("DELETE FROM side WHERE tbl = ? AND key = ?");
  const all = db.prepare<[string], { key: string; value: string }>("SELECT key, value FROM side WHERE tbl = ? ORDER BY rowid");
  const get = <T>(table: SideTable, key: string) => {
    const row = read.get(table, key);
    return row ? (JSON.parse(row.value) as T) : undefined;
  };
  const set = (table: SideTable, key: string, value: unknown) => void (value === undefined ? remove.run(table, key) : write.run(table, key, JSON.stringify(value)));
  const change = db.transaction(<T>(table: SideTable, key: string, change: (current: T | undefined) => T | undefined) => {
    const before = get<T>(table, key);
    set(table, key, change(before));
    return before;
  });
  return {
    get,
    set,
    change: (table, key, fn) => change.immediate(table, key, fn as never) as never,
    entries: <T>(table: SideTable) => all.all(table).map((row): [string, T] => [row.key, JSON.parse(row.value) as T]),
    close: () => db.close(),
  };
}
