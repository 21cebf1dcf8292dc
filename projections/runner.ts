// The checkpointed projection runner: reads events after each projection's checkpoint, folds them
// into documents, and commits documents and checkpoint together. Live updates and a rebuild from
// position zero run the very same code, so they reach the same documents.
//
// Reads that must reflect earlier writes wait for a position (waitFor: their own write's, or the
// store's head when the request began: caughtUp), never for a catch-up of their own: waiters
// share the one queued catch-up, are woken by any commit that passes their position, and give up
// after a bound (ReadModelBehind, 503). Reads that need no read model never wait.
import { CheckpointConflict, retryOnCheckpointConflict, untilAvailable, type AllReader, type ProjectionCommit, type ReadModelStore, type RecordedEvent, type Subscriber, type Subscription } from "../src/store/port.js";
import { ReadModelBehind } from "./behind.js";
import type { Projection } from "./projection.js";

/** Events per batch of a live catch-up (from a checkpoint): a few milliseconds of folding and committing. */
const LIVE_BATCH = 100;

export interface ProjectionRunner {
  /** Applies every stored event not yet applied; resolves with the last position applied. */
  catchUp(): Promise<number>;
  /** Drops the projection's documents and applies every event from position zero. */
  rebuild(name: string): Promise<number>;
  /**
   * Resolves once every read model has applied the events up to `position` (sharing the queued
   * catch-up with every other waiter); throws ReadModelBehind once `timeoutMs` (default: the
   * runner's waitMs) has passed without.
   */
  waitFor(position: number, options?: { timeoutMs?: number }): Promise<void>;
  /** waitFor(the store's head now): the read models reflect every write acknowledged before the call. */
  caughtUp(options?: { timeoutMs?: number }): Promise<void>;
  /** Resolves once the read models' storage is prepared at their versions (tables exist): reads may query them. */
  ready(): Promise<void>;
  /** Keeps the read models up to date as events are appended (a catch-up subscription). */
  start(): void;
  stop(): Promise<void>;
}

export function createProjectionRunner({
  store,
  readModels,
  projections,
  retired = [],
  batchSize = 1000,
  waitMs = 3_000,
  onError,
}: {
  store: AllReader & Subscriber;
  readModels: ReadModelStore;
  projections: readonly Projection<any>[];
  /** Projections no longer run: a store written by an earlier version drops their documents on the first catch-up. */
  retired?: readonly string[];
  batchSize?: number;
  /** How long waitFor() waits by default before ReadModelBehind (ms). */
  waitMs?: number;
  /** Told of each failed first catch-up start() waits out (logs). */
  onError?: (error: unknown) => void;
}): ProjectionRunner {
  let queue: Promise<number> = Promise.resolve(0);
  let subscription: Subscription | undefined;
  let subscribing: Promise<void> = Promise.resolve();
  let started = false;
  /** Aborted by stop(): a start() still waiting for the store gives up. */
  let stopping = new AbortController();
  /** Serialized: one catch-up at a time, so checkpoints only move forward. */
  const serialized = (run: () => Promise<number>) => (queue = queue.catch(() => 0).then(run));
  /**
   * Once per runner, before its first catch-up: retired projections dropped (where they still have
   * a checkpoint), every projection's storage prepared at its version (a changed one is dropped
   * and folded again from zero by the catch-up that follows).
   */
  let preparing: Promise<void> | undefined;
  const prepare = () =>
    (preparing ??= (async () => {
      for (const name of retired) if ((await readModels.checkpoint(name)) > 0) await readModels.reset(name);
      for (const p of projections) await readModels.prepare(p.name, { version: p.version ?? 1, ...(p.table && { table: p.table }) });
    })().catch((error: unknown) => {
      preparing = undefined;
      throw error;
    }));

  /** The last position every read model is known to have applied (this process's view; others' commits count once read). */
  let applied = 0;
  const waiters = new Set<{ position: number; reached(): void }>();
  function advance(position: number) {
    if (position <= applied) return;
    applied = position;
    for (const w of waiters) if (w.position <= applied) (waiters.delete(w), w.reached());
  }
  /** The catch-up queued and not started yet: every caller that wants one shares it. */
  let queued: Promise<number> | undefined;
  const requestCatchUp = () =>
    (queued ??= serialized(() => {
      queued = undefined;
      return catchUpNow();
    }));

  /**
   * Another process may commit the same projection meanwhile: each commit states the checkpoint
   * its documents were read at, and a CheckpointConflict means "re-read and fold again".
   */
  const catchUpNow = async () => {
    await prepare();
    const position = await retryOnCheckpointConflict(catchUpOnce);
    advance(position);
    return position;
  };

  /**
   * One batch of events, read once and folded by every projection, committed in one transaction
   * with every projection's checkpoint (each stating the checkpoint its documents were read at).
   */
  async function catchUpOnce(): Promise<number> {
    const checkpoints = await Promise.all(projections.map((p) => readModels.checkpoint(p.name)));
    advance(Math.min(...checkpoints)); // other processes' commits count too
    // A projection at checkpoint 0 has no documents. Every commit below checks the checkpoint it
    // started from, so as long as they succeed nobody else wrote: its documents are the ones this
    // catch-up wrote, and a key not among them is new (a rebuild from zero reads no documents).
    const written = checkpoints.map((c) => (c === 0 ? new Set<string>() : undefined));
    let after = Math.min(...checkpoints);
    // From zero: large batches (the fewest commits); live: small ones, each its own turn of the event
    // loop (a synchronous store, SQLite, would otherwise hold it for the whole catch-up)
    const size = checkpoints.includes(0) ? batchSize : Math.min(batchSize, LIVE_BATCH);
    const first = await store.readAll({ after, maxCount: size });
    const applyAll = async () => {
      for (let batch = first; batch.length > 0; batch = await store.readAll({ after, maxCount: size })) {
        if (batch !== first) await new Promise((resolve) => setImmediate(resolve));
        const last = batch[batch.length - 1]!.position;
        const commits = await Promise.all(
          projections.map(async (projection, i): Promise<ProjectionCommit | null> => {
            if (last <= checkpoints[i]!) return null;
            // Another process may commit between our checkpoint read and our document reads: the
            // documents then hold events past the checkpoint. Folded again, either the projection
            // refuses them (the machine: applied twice), which is a conflict (read again), not a
            // broken stream, or the commit below is refused for its expected checkpoint. So no
            // checkpoint read is spent on the way when nothing failed.
            const docs = await fold(projection, batch, checkpoints[i]!, written[i]).catch(async (error: unknown) => {
              const actual = await readModels.checkpoint(projection.name);
              throw actual !== checkpoints[i] ? new CheckpointConflict(projection.name, checkpoints[i]!, actual) : error;
            });
            return { projection: projection.name, docs: [...docs].map(([key, doc]) => ({ key, doc })), checkpoint: last, expectedCheckpoint: checkpoints[i] };
          }),
        );
        await readModels.commitBatch(commits.filter((c) => c !== null));
        for (const [i, commit] of commits.entries()) {
          if (!commit) continue;
          checkpoints[i] = last;
          for (const { key } of commit.docs) written[i]?.add(key);
        }
        after = last;
        advance(Math.min(...checkpoints));
      }
      return after;
    };
    // From zero with more than a batch to go (a rebuild, a new projection, read models lost): the
    // store may leave these commits unsynced and make them durable at the end (ReadModelStore.bulk).
    return checkpoints.includes(0) && first.length === size && readModels.bulk ? readModels.bulk(applyAll) : applyAll();
  }

  /** The projection's documents after the batch's events past its checkpoint, by key (only those that changed). */
  async function fold(projection: Projection<any>, batch: readonly RecordedEvent[], checkpoint: number, written: Set<string> | undefined): Promise<Map<string, unknown>> {
    const keys = batch.map((event) => (event.position <= checkpoint ? null : projection.keyOf(event)));
    // stored documents are read only for keys that may have one (from zero: those written already)
    const wanted = new Set<string>();
    for (const key of keys) if (key !== null && (!written || written.has(key))) wanted.add(key);
    const stored = wanted.size > 0 ? await readModels.getMany(projection.name, [...wanted]) : new Map<string, unknown>();
    const changed = new Map<string, unknown>();
    batch.forEach((event, i) => {
      const key = keys[i];
      if (key != null) changed.set(key, projection.apply(changed.has(key) ? changed.get(key) : stored.get(key), event));
    });
    return changed;
  }

  async function waitFor(position: number, { timeoutMs = waitMs }: { timeoutMs?: number } = {}) {
    await prepare();
    if (position <= applied) return;
    const started = Date.now();
    let expired = false;
    let deadline: NodeJS.Timeout | undefined;
    let pause: NodeJS.Timeout | undefined;
    const expiry = new Promise<void>((resolve) => (deadline = setTimeout(() => resolve(void (expired = true)), timeoutMs)));
    const waiter = { position, reached: () => undefined as void };
    const reached = new Promise<void>((resolve) => (waiter.reached = resolve));
    waiters.add(waiter);
    try {
      // A catch-up that ends short of the position (the store does not show its events yet:
      // PostgreSQL until older transactions end; or it failed) is asked for again after a short
      // pause, doubling.
      for (let again = 1; applied < position; again = Math.min(2 * again, 50)) {
        if (expired) throw new ReadModelBehind(position, applied, Date.now() - started);
        const thenPause = () => new Promise<void>((resolve) => (pause = setTimeout(resolve, again)));
        await Promise.race([reached, expiry, requestCatchUp().then(thenPause, thenPause)]);
      }
    } finally {
      clearTimeout(deadline);
      clearTimeout(pause);
      waiters.delete(waiter);
    }
  }

  return {
    catchUp: () => serialized(catchUpNow),
    waitFor,
    async caughtUp(options) {
      await waitFor(await store.head(), options);
    },
    ready: prepare,
    rebuild: (name) =>
      serialized(async () => {
        if (!projections.some((p) => p.name === name)) throw new Error(`no projection ${name}`);
        await readModels.reset(name);
        return catchUpNow();
      }),
    start() {
      if (started) return;
      started = true;
      // The subscription only signals; one serialized catch-up does the work for all the events
      // signalled while it was queued (a burst costs one catch-up, not one per event), shared with
      // the reads waiting for a position.
      const signal = () => void requestCatchUp().catch(() => undefined);
      // Subscribe from where the first catch-up got to: events already projected are not read again.
      // The store unavailable (an outage, a process started into one): tried again with a growing pause.
      const { signal: stopped } = stopping;
      subscribing = untilAvailable(() => serialized(catchUpNow), { signal: stopped, ...(onError && { onError }) }).then((position) => {
        if (position !== undefined && started && !stopped.aborted) subscription = store.subscribeToAll({ after: position }, signal);
      });
    },
    async stop() {
      started = false;
      stopping.abort();
      stopping = new AbortController();
      await subscribing;
      await subscription?.close();
      subscription = undefined;
      await queue.catch(() => undefined);
    },
  };
}
