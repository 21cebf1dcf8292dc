// WAL checkpoints off the event loop. SQLite checkpoints on the connection whose commit crosses
// wal_autocheckpoint, inside that commit: better-sqlite3 is synchronous, so the copy of the WAL's
// pages into the database file and its fsync held the event loop (a read-models commit that
// checkpointed took ~5 ms against ~0.1 ms, 3.5 % of live commits; docs/stores.md). Here a worker
// thread of the process, with a connection of its own to each file, checkpoints a file (PASSIVE:
// it never blocks a writer or a reader) when its connection committed since the last look, every
// CHECKPOINT_EVERY_MS. The committing connection keeps wal_autocheckpoint as a backstop
// (BACKSTOP_PAGES), which bounds the WAL: a WAL starts over only when a write begins after a
// checkpoint that copied every frame, which steady writes rarely leave room for, so under load the
// backstop restarts it, with little left to copy by then (the worker copied the rest).
import type Database from "better-sqlite3";
import { askingWorker, type AskingWorker } from "./worker.js";

/** How often a file that was written is checkpointed. */
export const CHECKPOINT_EVERY_MS = 100;
/** The committing connection's own checkpoints: past this many WAL pages (SQLite's default; 4,000 left a rebuild reading a bigger WAL, ~9 % slower). */
export const BACKSTOP_PAGES = 1_000;

// Plain JavaScript (no loader in the worker): one connection per file, opened on its first checkpoint.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const open = new Map();
parentPort.on("message", ({ id, path, close, end }) => {
  if (end) return void (open.forEach((db) => db.close()), parentPort.close()); // the thread ends
  let db = open.get(path);
  let result = null;
  try {
    if (close) {
      db?.close();
      open.delete(path);
    } else {
      if (!db) {
        open.set(path, (db = new Database(path, { fileMustExist: true, timeout: 20 })));
        db.pragma("cache_size = -256"); // it copies WAL frames, it does not read much: 256 KB, not 2 MB
      }
      result = db.pragma("wal_checkpoint(PASSIVE)")[0];
    }
  } catch {
    // busy (another process checkpoints it) or gone: the next look tries again, the backstop bounds the WAL
  }
  parentPort.postMessage({ id, result });
});
`;

/** What a checkpoint did: the WAL's frames and how many of them are now in the database file (null: it could not run). */
export type Checkpointed = { busy: number; log: number; checkpointed: number } | null;
type Question = { path?: string; close?: true; end?: true };

/** The worker, shared by every file of the process that is watched; it ends with the last. */
let shared: AskingWorker<Question, { result: Checkpointed }> | undefined;
/** Files watched in this process: the worker starts at the first checkpoint (not at open: a CLI that only reads never starts it) and ends with the last file. */
let watched = 0;

/** Sends one message about a file; resolves when the worker answered it (null: it could not). */
function ask(question: Question): Promise<Checkpointed> {
  // a few small messages a second: a small heap (V8's default young generation would grow to ~50 MB of RSS)
  shared ??= askingWorker(WORKER_SOURCE, {}, { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 16 });
  // ended (it never should): each file keeps its backstop
  return shared.ask(question).then(({ result }) => result, () => null);
}

export interface OffLoopCheckpoints {
  /** The committing connection checkpoints on its own meanwhile (bulk: unsynced, fast, on the loop as before). */
  onTheLoop(): void;
  offTheLoop(): void;
  /** Another connection of this process committed to the file (./committer.ts): looked at like this one's commits. */
  committedElsewhere(): void;
  /** A checkpoint that starts after every commit made so far (tests). */
  settled(): Promise<Checkpointed>;
  /** Closes the worker's connection to the file (before the file's own closes, so that one is the last and removes the WAL). */
  close(): Promise<void>;
}

/** Checkpoints `db`'s file (at `path`) in the worker, whenever `db` committed since the last look. */
export function checkpointOffTheLoop(db: Database.Database, path: string, onLoopPages: number): OffLoopCheckpoints {
  const totalChanges = db.prepare<[], number>("SELECT total_changes()").pluck();
  db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  watched++;
  /** Whether the worker has a connection to the file to close. */
  let opened = false;
  let elsewhere = 0;
  const changes = () => totalChanges.get()! + elsewhere;
  let seen = changes();
  let running: Promise<unknown> | undefined;
  let closed = false;
  let onLoop = false;
  const look = () => {
    if (closed || onLoop || running || !db.open) return;
    const now = changes();
    if (now === seen) return;
    seen = now;
    opened = true;
    running = ask({ path }).finally(() => (running = undefined));
  };
  const timer = setInterval(look, CHECKPOINT_EVERY_MS);
  timer.unref();
  return {
    onTheLoop() {
      onLoop = true;
      db.pragma(`wal_autocheckpoint = ${onLoopPages}`);
    },
    committedElsewhere() {
      elsewhere++;
    },
    offTheLoop() {
      onLoop = false;
      db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    },
    async settled() {
      await running;
      seen = changes();
      opened = true;
      return ask({ path });
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await running;
      if (opened) await ask({ path, close: true });
      if (--watched === 0 && shared) {
        const last = shared;
        shared = undefined;
        await last.end({ end: true });
      }
    },
  };
}
