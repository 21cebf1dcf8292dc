// The checkpointed projection runner: reads events after each projection's checkpoint, folds them
// into documents, and commits documents and checkpoint together. Live updates and a rebuild from
// position zero run the very same code, so they reach the same documents.
import { CheckpointConflict, type EventStore, type ReadModelStore, type Subscription } from "../src/store/port.js";
import type { Projection } from "./projection.js";

export interface ProjectionRunner {
  /** Applies every stored event not yet applied; resolves with the last position applied. */
  catchUp(): Promise<number>;
  /** Drops the projection's documents and applies every event from position zero. */
  rebuild(name: string): Promise<number>;
  /** Keeps the read models up to date as events are appended (a catch-up subscription). */
  start(): void;
  stop(): Promise<void>;
}

export function createProjectionRunner({
  store,
  readModels,
  projections,
  batchSize = 1000,
}: {
  store: EventStore;
  readModels: ReadModelStore;
  projections: readonly Projection<any>[];
  batchSize?: number;
}): ProjectionRunner {
  let queue: Promise<number> = Promise.resolve(0);
  let subscription: Subscription | undefined;
  /** Serialized: one catch-up at a time, so checkpoints only move forward. */
  const serialized = (run: () => Promise<number>) => (queue = queue.catch(() => 0).then(run));

  /**
   * Another process may commit the same projection meanwhile: each commit states the checkpoint
   * its documents were read at, and a CheckpointConflict means "re-read and fold again".
   */
  async function catchUpNow(): Promise<number> {
    for (;;) {
      try {
        return await catchUpOnce();
      } catch (error) {
        if (!(error instanceof CheckpointConflict)) throw error;
      }
    }
  }

  async function catchUpOnce(): Promise<number> {
    const checkpoints = await Promise.all(projections.map((p) => readModels.checkpoint(p.name)));
    let after = Math.min(...checkpoints);
    for (;;) {
      const batch = await store.readAll({ after, maxCount: batchSize });
      if (batch.length === 0) return after;
      for (const [i, projection] of projections.entries()) {
        const changed = new Map<string, unknown>();
        for (const event of batch) {
          if (event.position <= checkpoints[i]!) continue;
          const key = projection.keyOf(event);
          if (key === null) continue;
          const doc = changed.has(key) ? changed.get(key) : await readModels.get(projection.name, key);
          changed.set(key, projection.apply(doc, event));
        }
        const last = batch[batch.length - 1]!.position;
        if (last > checkpoints[i]!) {
          await readModels.commit(projection.name, [...changed].map(([key, doc]) => ({ key, doc })), last, checkpoints[i]);
          checkpoints[i] = last;
        }
      }
      after = batch[batch.length - 1]!.position;
    }
  }

  return {
    catchUp: () => serialized(catchUpNow),
    rebuild: (name) =>
      serialized(async () => {
        if (!projections.some((p) => p.name === name)) throw new Error(`no projection ${name}`);
        await readModels.reset(name);
        return catchUpNow();
      }),
    start() {
      if (subscription) return;
      // The subscription only signals; one serialized catch-up does the work for all the events
      // signalled while it was queued (a burst costs one catch-up, not one per event).
      let queued = false;
      const signal = () => {
        if (queued) return;
        queued = true;
        void serialized(() => {
          queued = false;
          return catchUpNow();
        }).catch(() => undefined);
      };
      subscription = store.subscribeToAll({}, signal);
      signal();
    },
    async stop() {
      await subscription?.close();
      subscription = undefined;
      await queue.catch(() => undefined);
    },
  };
}
