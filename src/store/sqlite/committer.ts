// The read models' commits off the event loop. better-sqlite3 is synchronous: a live catch-up's
// commit (its B-tree writes, the WAL's checksums and write() calls, and past the backstop a WAL
// checkpoint) ran on the loop, 22 % of the server's CPU under the mixed load with a p99 of 14.6 ms
// a batch, and every request ready meanwhile waited for it (docs/BENCHMARKS.md, row 13a). Here a
// worker thread of its own, with a connection of its own to the file, runs each batch in one
// immediate transaction; the loop only builds the statements' parameters (./tables.ts) and awaits
// the answer. A commit is visible to the loop's connection once answered (WAL: the next read
// transaction sees it). SQLite's wait for another process's write lock blocks the worker, not the
// loop, so it waits there up to busyTimeoutMs and answers busy past it.
import { CheckpointConflict } from "../port/read-models.js";
import { translated } from "./open.js";
import { BACKSTOP_PAGES } from "./checkpoints.js";
import { askingWorker } from "./worker.js";

/** One statement run for each of its rows of parameters. */
export interface Statements {
  sql: string;
  rows: unknown[][];
}

/** A projection's part of a batch, as SQL: its checkpoint checked, its rows written, its checkpoint set. */
export interface CommitPlan {
  projection: string;
  expectedCheckpoint: number | undefined;
  checkpoint: number;
  writes: Statements[];
}

type Answer = { conflict?: { projection: string; expected: number; actual: number }; error?: { message: string; code?: string } };

// Plain JavaScript (no loader in the worker). A conflict or an error throws out of the transaction,
// which rolls the whole batch back.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true, timeout: workerData.busyTimeoutMs });
db.pragma("synchronous = NORMAL");
db.pragma("wal_autocheckpoint = " + workerData.backstopPages);
const statements = new Map();
const statement = (sql) => {
  let s = statements.get(sql);
  if (!s) statements.set(sql, (s = db.prepare(sql)));
  return s;
};
const checkpointOf = db.prepare("SELECT position FROM checkpoints WHERE projection = ?").pluck();
const setCheckpoint = db.prepare("INSERT INTO checkpoints (projection, position) VALUES (?, ?) ON CONFLICT (projection) DO UPDATE SET position = excluded.position");
class Conflict { constructor(c) { this.conflict = c; } }
const commit = db.transaction((plans) => {
  for (const { projection, expectedCheckpoint, checkpoint, writes } of plans) {
    const actual = checkpointOf.get(projection) ?? 0;
    if (expectedCheckpoint !== undefined && expectedCheckpoint !== actual) throw new Conflict({ projection, expected: expectedCheckpoint, actual });
    for (const { sql, rows } of writes) {
      const s = statement(sql);
      for (const row of rows) s.run(...row);
    }
    setCheckpoint.run(projection, checkpoint);
  }
});
parentPort.on("message", ({ id, plans, close }) => {
  if (close) return void (db.close(), parentPort.close()); // the thread ends
  try {
    commit.immediate(plans);
    parentPort.postMessage({ id });
  } catch (error) {
    if (error instanceof Conflict) parentPort.postMessage({ id, conflict: error.conflict });
    else parentPort.postMessage({ id, error: { message: String(error && error.message), code: error && error.code } });
  }
});
`;

export interface Committer {
  /** Commits the batch in the worker; CheckpointConflict, StoreUnavailable (another process's lock past the bound) or the error as the worker saw it. */
  commit(plans: CommitPlan[]): Promise<void>;
  /** Closes the worker's connection (before the loop's own, so that one is the last and removes the WAL). */
  close(): Promise<void>;
}

/** A worker committing to the read models' file at `path` (it must exist: the loop's connection made it). */
export function committerOffTheLoop(path: string, busyTimeoutMs: number): Committer {
  const worker = askingWorker<{ plans?: CommitPlan[]; close?: true }, Answer>(WORKER_SOURCE, { path, busyTimeoutMs, backstopPages: BACKSTOP_PAGES });
  return {
    async commit(plans) {
      const { conflict, error } = await worker.ask({ plans });
      if (conflict) throw new CheckpointConflict(conflict.projection, conflict.expected, conflict.actual);
      if (!error) return;
      const failed = Object.assign(new Error(`read models' commit: ${error.message}`), { code: error.code });
      throw translated(failed);
    },
    close: () => worker.end({ close: true }),
  };
}
