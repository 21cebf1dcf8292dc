// A worker thread of the process that answers questions in the order they were asked: SQLite work
// kept off the event loop (./checkpoints.ts, ./committer.ts). Its source is plain JavaScript (no
// TypeScript loader runs in a worker) that answers each message `{ id, ... }` with `{ id, ... }`.
// It starts at the first question (a CLI that only reads never starts one), holds the process open
// only while a question is open, and if it ends (it never should), its open questions are refused
// and the next question starts another.
import { createRequire } from "node:module";
import { Worker, type ResourceLimits } from "node:worker_threads";

/** better-sqlite3, as the worker's source requires it (`workerData.driver`). */
const DRIVER = createRequire(import.meta.url).resolve("better-sqlite3");

export interface AskingWorker<Q, A> {
  ask(question: Q): Promise<A>;
  /** Sends `last` (the source closes its connections and its port), waits for the thread to end. */
  end(last: Q): Promise<void>;
}

export function askingWorker<Q extends object, A extends object>(source: string, workerData: object, resourceLimits?: ResourceLimits): AskingWorker<Q, A> {
  let worker: Worker | undefined;
  let next = 0;
  const waiting = new Map<number, { resolve: (answer: A) => void; reject: (error: Error) => void }>();

  function started(): Worker {
    if (worker) return worker;
    const w = new Worker(source, { eval: true, execArgv: [], workerData: { driver: DRIVER, ...workerData }, ...(resourceLimits && { resourceLimits }) });
    w.on("message", ({ id, ...answer }: { id: number }) => {
      const question = waiting.get(id);
      waiting.delete(id);
      if (waiting.size === 0) w.unref();
      question?.resolve(answer as A);
    });
    w.on("error", () => undefined); // its exit follows
    w.on("exit", () => {
      worker = undefined;
      const open = [...waiting.values()];
      waiting.clear();
      open.forEach(({ reject }) => reject(new Error("the worker thread ended")));
    });
    w.unref();
    return (worker = w);
  }

  return {
    ask(question) {
      const w = started();
      const id = next++;
      return new Promise<A>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        if (waiting.size === 1) w.ref();
        w.postMessage({ ...question, id });
      });
    },
    async end(last) {
      const w = worker;
      if (!w) return;
      const exited = new Promise((resolve) => w.once("exit", resolve));
      w.ref();
      w.postMessage(last); // after the questions asked before it
      await exited;
    },
  };
}
