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
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** How often a file that was written is checkpointed. */
export const CHECKPOINT_EVERY_MS = 100;
/** The committing connection's own checkpoints: past this many WAL pages (SQLite's default; 4,000 left a rebuild reading a bigger WAL, ~9 % slower). */
export const BACKSTOP_PAGES = 1_000;

// Plain JavaScript (no loader in the worker): one connection per file, opened on its first checkpoint.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const open = new Map();
parentPort.on("message", ({ path, close }) => {
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
  parentPort.postMessage({ path, result });
});
`;

/** What a checkpoint did: the WAL's frames and how many of them are now in the database file (null: it could not run). */
export type Checkpointed = { busy: number; log: number; checkpointed: number } | null;
type Answer = (result: Checkpointed) => void;

/** The worker, shared by every file of the process that is watched; it ends with the last. */
let shared: { worker: Worker; answers: Map<string, Answer[]>; asked: number; gone: boolean } | undefined;
/** Files watched in this process: the worker starts at the first checkpoint (not at open: a CLI that only reads never starts it) and ends with the last file. */
let watched = 0;

function worker() {
  if (!shared) {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      execArgv: [],
      workerData: { driver: createRequire(import.meta.url).resolve("better-sqlite3") },
      // a few small messages a second: a small heap (V8's default young generation would grow to ~50 MB of RSS)
      resourceLimits: { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 16 },
    });
    const answers = new Map<string, Answer[]>();
    const state = { worker, answers, asked: 0, gone: false };
    // it keeps the process alive only while a question is open (a close awaited at a CLI's end)
    const answered = ({ path, result }: { path: string; result: Checkpointed }) => {
      answers.get(path)?.shift()?.(result);
      if (--state.asked === 0) worker.unref();
    };
    worker.on("message", answered);
    // gone (it never should): each file keeps its backstop; waiters go on, later questions are answered at once
    worker.on("exit", () => {
      state.gone = true;
      answers.forEach((waiting, path) => waiting.slice().forEach(() => answered({ path, result: null })));
    });
    worker.on("error", () => undefined);
    worker.unref();
    shared = state;
  }
  return shared;
}

/** Sends one message about a file; resolves when the worker answered it. */
function ask(path: string, message: { path: string; close?: true }): Promise<Checkpointed> {
  const state = worker();
  if (state.gone) return Promise.resolve(null);
  return new Promise((answered) => {
    const waiting = state.answers.get(path) ?? [];
    state.answers.set(path, waiting);
    waiting.push(answered);
    if (state.asked++ === 0) state.worker.ref();
    state.worker.postMessage(message);
  });
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
    running = ask(path, { path }).finally(() => (running = undefined));
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
      return ask(path, { path });
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await running;
      if (opened) await ask(path, { path, close: true });
      if (--watched === 0 && shared) {
        const { worker: w } = shared;
        shared = undefined;
        await w.terminate();
      }
    },
  };
}
