// The checkpointed projection runner: reads events after each projection's checkpoint, folds them
// into documents, and commits documents and checkpoint together. Live updates and a rebuild from
// position zero run the very same code, so they reach the same documents.
//
// It is the one catch-up of the read side: folds of whole batches that other floors own (the
// webhook feed, src/webhooks/feed.ts) join it, so each batch of new events is read once (from the
// live subscription's delivery when it holds them, else from the store), parsed once, folded by
// every projection and joined fold, and committed in one read-model transaction with every
// checkpoint.
//
// Reads that must reflect earlier writes wait for a position (waitFor: their own write's, or the
// store's head when the request began: caughtUp), never for a catch-up of their own: waiters
// share the one queued catch-up, are woken by any commit that passes their position, and give up
// after a bound (ReadModelBehind, 503). Reads that need no read model never wait. The API's lists
// read through `fresh`: on PostgreSQL a list checks the head in its own statement; with SQLite's
// committer they are told once the batch holding their position is posted, its documents answered
// by the store's reads while it commits.
import { CheckpointConflict, outageTolerantStart, retryOnCheckpointConflict, type AllReader, type ProjectionCommit, type ReadModelStore, type RecordedEvent, type Subscriber, type Subscription } from "../src/store/port.js";
import { coalesced } from "../src/coalesced.js";
import { ReadModelBehind } from "./behind.js";
import { readModelShape, type Projection } from "./projection.js";

/** Events per batch of a live catch-up (from a checkpoint): a few milliseconds of folding and committing. */
const LIVE_BATCH = 100;
/** Events the live subscription delivered and no catch-up applied yet, kept at most (past it: read from the store). */
const TAIL_MAX = 10_000;
/** A failed live catch-up is asked for again after this pause, doubling up to RETRY_MAX_MS (ms). */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * A fold of whole batches that joins the runner's catch-up (the webhook feed): it is given each
 * batch the runner reads, and its commits go into the batch's transaction.
 */
export interface BatchFold {
  /** Its checkpoint: the commits it returns all move to the batch's last position from this one's. */
  name: string;
  /**
   * The commits that apply `batch`'s events past `checkpoint` (a part of the batch may be at or
   * below it), each at `last` with `expectedCheckpoint: checkpoint`. A throw is checked like a
   * projection's (another process moved the checkpoint: fold again).
   */
  fold(batch: readonly RecordedEvent[], checkpoint: number, last: number): Promise<ProjectionCommit[]>;
  /** Told each position its checkpoint reached: this process's commits, and other processes' once read. */
  reached(position: number): void;
  /** Its read models' storage made ready at their versions, before each catch-up (once, in practice: memoized by the fold). */
  prepare?(): Promise<void>;
}

export interface ProjectionRunner {
  /** Applies every stored event not yet applied (the queued catch-up, shared); resolves with the last position applied. */
  catchUp(): Promise<number>;
  /** Drops the projection's documents and applies every event from position zero. */
  rebuild(name: string): Promise<number>;
  /**
   * Resolves once every read model has applied the events up to `position` (sharing the queued
   * catch-up with every other waiter); throws ReadModelBehind once `timeoutMs` (default: the
   * runner's waitMs) has passed without.
   */
  waitFor(position: number, options?: { timeoutMs?: number }): Promise<void>;
  /** waitFor(the store's head now): the read models reflect every write acknowledged before the call; resolves with that head. */
  caughtUp(options?: { timeoutMs?: number }): Promise<number>;
  /**
   * Reads of the read models that reflect every write acknowledged before each of them began: a
   * query in one round trip where the store checks its checkpoint against the head in the query's
   * own snapshot (queryAtHead), else the read once the read models passed the head at the call
   * (with an ordered store, as soon as the documents under way hold it: ReadModelStore.ordered).
   */
  readonly fresh: Pick<ReadModelStore, "get" | "list" | "query">;
  /** Resolves once the read models' storage is prepared at their versions (tables exist): reads may query them. */
  ready(): Promise<void>;
  /** Folds each batch with `fold` too, until the answer is called (a second fold of the same name shares the first's work). */
  join(fold: BatchFold): () => void;
  /**
   * Keeps the read models up to date as events are appended (a catch-up subscription) while any
   * holder wants it (the engine's live projections, a started feed); resolves once the first
   * catch-up is done (a store outage waited out) or a stop ended the wait.
   */
  start(holder?: object): Promise<void>;
  /** The holder no longer wants live updates; with none left, the subscription ends. */
  stop(holder?: object): Promise<void>;
}

/** The holder of start()/stop() when none is named: the engine's live projections. */
const LIVE = {};

/**
 * Read models whose checkpoint is past the events' head were written before the events were
 * restored from an older backup: they describe events the log no longer holds, at positions new
 * events will take again. Dropped (their storage prepared), so they are folded again from zero.
 */
export async function dropPastHead(readModels: ReadModelStore, store: Pick<AllReader, "head">, names: readonly string[]): Promise<void> {
  const top = await store.head();
  for (const name of names) if ((await readModels.checkpoint(name)) > top) await readModels.reset(name);
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
  const holders = new Set<object>();
  const background = outageTolerantStart(onError);
  /** Serialized: one catch-up at a time, so checkpoints only move forward. */
  const serialized = (run: () => Promise<number>) => (queue = queue.catch(() => 0).then(run));
  /**
   * Once per runner, before its first catch-up: retired projections dropped (where they still have
   * a checkpoint), a projection past the events' head dropped (the events were restored from a
   * backup older than the read models: they describe events the log no longer holds), every
   * projection's storage prepared at its version (a changed one is dropped and folded again from
   * zero by the catch-up that follows).
   */
  let preparing: Promise<void> | undefined;
  const prepare = () =>
    (preparing ??= (async () => {
      for (const name of retired) if ((await readModels.checkpoint(name)) > 0) await readModels.reset(name);
      for (const p of projections) await readModels.prepare(p.name, readModelShape(p));
      await dropPastHead(readModels, store, projections.map((p) => p.name));
    })().catch((error: unknown) => {
      preparing = undefined;
      throw error;
    }));

  /** The joined folds by name, each told its positions through every fold that joined under that name. */
  const joined = new Map<string, { fold: BatchFold; reached: Set<(position: number) => void> }>();

  /**
   * The live subscription's events not applied yet: a slice of the log, every event after `from`
   * in order (the subscription delivers each once, in order), so a catch-up takes its batch here
   * instead of reading and parsing the same events again.
   */
  let tail = { from: 0, events: [] as RecordedEvent[] };
  function fromTail(after: number, maxCount: number): RecordedEvent[] | undefined {
    const { from, events } = tail;
    if (after < from || events.length === 0 || events[events.length - 1]!.position <= after) return undefined;
    const first = events.findIndex((e) => e.position > after);
    return events.slice(first, first + maxCount);
  }
  /** The tail without the events at or before `position` (applied). */
  function trim(position: number) {
    const { from, events } = tail;
    if (events.length === 0 || position < from) return;
    const kept = events.findIndex((e) => e.position > position);
    tail = kept === -1 ? { from: events[events.length - 1]!.position, events: [] } : kept === 0 ? tail : { from: events[kept - 1]!.position, events: events.slice(kept) };
  }
  function keep(event: RecordedEvent) {
    tail.events.push(event);
    // a catch-up that cannot keep up (the read models' database away): the store is read instead
    if (tail.events.length > TAIL_MAX) tail = { from: event.position, events: [] };
  }

  /** The last position every read model is known to have applied (this process's view; others' commits count once read). */
  let applied = 0;
  /**
   * With a store whose reads answer the documents of commits under way (ReadModelStore.ordered):
   * the last position whose batch was posted. It holds while no commit under way failed since
   * (the store's `dropped` count); after one, what is applied is what the reads see.
   */
  let posted = { position: 0, dropped: readModels.dropped };
  const visible = () => (readModels.dropped === posted.dropped ? Math.max(posted.position, applied) : applied);
  /** Reads waiting for a position: applied (stored), or visible (`underWay`: the documents under way count). */
  const waiters = new Set<{ position: number; underWay: boolean; reached(): void }>();
  const wake = () => {
    for (const w of waiters) if (w.position <= (w.underWay ? visible() : applied)) (waiters.delete(w), w.reached());
  };
  function advance(position: number) {
    if (position <= applied) return;
    applied = position;
    wake();
  }
  /**
   * A batch up to `position` was posted to an ordered store: its documents are the reads' already,
   * unless the store's `dropped` count moved past `dropped` (its count before the commit's call),
   * as it does when it refuses the commit at its call.
   */
  function reveal(position: number, dropped: number | undefined) {
    posted = { position: dropped === posted.dropped ? Math.max(posted.position, position) : position, dropped };
    wake();
  }
  /**
   * The catch-up queued and not started yet: every caller that wants one shares it. Callers want
   * the store read to its end (every event stored before the call applied); the live
   * subscription's signal only wants the events it delivered applied (`toEnd` false: no read of
   * the store after them, which the next delivery would answer anyway).
   */
  let queued: Promise<number> | undefined;
  let queuedToEnd = false;
  const requestCatchUp = (toEnd = true) => {
    queuedToEnd ||= toEnd;
    return (queued ??= serialized(() => {
      const wanted = queuedToEnd;
      queued = undefined;
      queuedToEnd = false;
      return catchUpNow(wanted);
    }));
  };

  /**
   * Another process may commit the same projection meanwhile: each commit states the checkpoint
   * its documents were read at, and a CheckpointConflict means "re-read and fold again".
   */
  const catchUpNow = async (toEnd = true) => {
    await prepare();
    const position = await retryOnCheckpointConflict(() => catchUpOnce(toEnd));
    advance(position);
    return position;
  };

  /**
   * One batch of events, read once and folded by every projection and joined fold, committed in
   * one transaction with every checkpoint (each stating the checkpoint its documents were read at).
   */
  async function catchUpOnce(toEnd: boolean): Promise<number> {
    const folds = [...joined.values()];
    const names = [...projections.map((p) => p.name), ...folds.map((f) => f.fold.name)];
    if (names.length === 0) return 0;
    for (const { fold } of folds) await fold.prepare?.();
    const checkpoints = readModels.checkpoints ? await readModels.checkpoints(names) : await Promise.all(names.map((name) => readModels.checkpoint(name)));
    // other processes' commits count too
    const tell = () => folds.forEach(({ reached }, i) => reached.forEach((r) => r(checkpoints[projections.length + i]!)));
    tell();
    advance(Math.min(...checkpoints));
    // A projection at checkpoint 0 has no documents. Every commit below checks the checkpoint it
    // started from, so as long as they succeed nobody else wrote: its documents are the ones this
    // catch-up wrote, and a key not among them is new (a rebuild from zero reads no documents).
    const parts: Array<BatchFold["fold"]> = [
      ...projections.map((projection, i) => projectionFold(projection, checkpoints[i] === 0 ? new Set<string>() : undefined)),
      ...folds.map(({ fold }) => fold.fold.bind(fold)),
    ];
    let after = Math.min(...checkpoints);
    // From zero: large batches (the fewest commits); live: small ones, each its own turn of the event
    // loop (a synchronous store, SQLite, would otherwise hold it for the whole catch-up)
    const size = checkpoints.includes(0) ? batchSize : Math.min(batchSize, LIVE_BATCH);
    // Each batch from the subscription's delivery when it holds it, else from the store. Once the
    // delivered events are applied, the store is read on only for a caller that wants its end; a
    // read of the store that came back short was at its end (after every caller began), so no
    // further read is spent to find an empty one.
    let delivered = false;
    let ended = false;
    const read = async () => {
      const kept = fromTail(after, size);
      if (kept) return (delivered = true), kept;
      if (ended || (delivered && !toEnd)) return [];
      const events = await store.readAll({ after, maxCount: size });
      ended = events.length < size;
      return events;
    };
    const first = await read();
    // With a store that applies commits in the order they are made (ReadModelStore.ordered: SQLite's
    // committer thread), the next batch is folded while the one before commits: its documents are
    // the store's at once (getMany), its expected checkpoints those the batch before sets, and a
    // failed commit fails every later one (their expected checkpoints are not the stored ones).
    // The reads waiting for a position (fresh) are told once its batch is posted (its documents
    // are the reads' then), the others (caughtUp, waitFor) once it committed.
    const folded = [...checkpoints];
    const applyAll = async () => {
      let committing: Promise<void> | undefined;
      // a turn of the event loop since the batch before was committed (a commit the store answered
      // from another thread already gave one; a synchronous one did not)
      let turned: Promise<unknown> = Promise.resolve();
      try {
        for (let batch = first; batch.length > 0; batch = await read()) {
          await turned;
          const last = batch[batch.length - 1]!.position;
          const commits = await Promise.all(
            parts.map(async (fold, i) => {
              if (last <= folded[i]!) return [];
              // Another process may commit between our checkpoint read and our document reads: the
              // documents then hold events past the checkpoint. Folded again, either the fold
              // refuses them (the machine: applied twice), which is a conflict (read again), not a
              // broken stream, or the commit below is refused for its expected checkpoint. So no
              // checkpoint read is spent on the way when nothing failed.
              return fold(batch, folded[i]!, last).catch(async (error: unknown) => {
                const actual = await readModels.checkpoint(names[i]!);
                throw actual !== folded[i] ? new CheckpointConflict(names[i]!, folded[i]!, actual) : error;
              });
            }),
          );
          const revealing = readModels.ordered === true;
          // counted before the call: a commit refused at it (another process's commit moved the
          // checkpoint since this catch-up read it) counts as dropped, and its batch is not revealed
          const droppedBefore = readModels.dropped;
          const commit = readModels.commitBatch(commits.flat()).then(() => {
            for (const i of checkpoints.keys()) checkpoints[i] = Math.max(checkpoints[i]!, last);
            tell();
            advance(Math.min(...checkpoints));
            trim(last);
          });
          commit.catch(() => undefined); // awaited below, after the next batch's fold when ordered
          turned = new Promise((resolve) => setImmediate(resolve));
          for (const i of folded.keys()) folded[i] = Math.max(folded[i]!, last);
          if (revealing) reveal(Math.min(...folded), droppedBefore);
          after = last;
          const before = committing;
          committing = commit;
          await (readModels.ordered ? before : commit);
        }
        await committing;
      } catch (error) {
        await committing?.catch(() => undefined); // none left under way: a retry reads what is stored
        throw error;
      }
      return after;
    };
    // From zero with more than a batch to go (a rebuild, a new projection, read models lost): the
    // store may leave these commits unsynced and make them durable at the end (ReadModelStore.bulk).
    return checkpoints.includes(0) && first.length === size && readModels.bulk ? readModels.bulk(applyAll) : applyAll();
  }

  /**
   * A projection as a fold of batches: its documents after the batch's events past its checkpoint
   * (only those that changed). `written`: from zero, the keys this catch-up wrote (no others exist).
   */
  const projectionFold =
    (projection: Projection<any>, written: Set<string> | undefined): BatchFold["fold"] =>
    async (batch, checkpoint, last) => {
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
      // a failed commit ends this catch-up, and the next one starts from fresh checkpoints and sets
      for (const key of changed.keys()) written?.add(key);
      return [{ projection: projection.name, docs: [...changed].map(([key, doc]) => ({ key, doc })), checkpoint: last, expectedCheckpoint: checkpoint }];
    };

  /**
   * The store's head for caughtUp: concurrent requests share one read that started after each of
   * them began (so it still counts every write acknowledged before them), one read at a time
   * (on PostgreSQL the head was one of a list's two round trips).
   */
  const head = coalesced(() => store.head());

  async function waitFor(position: number, { timeoutMs = waitMs, underWay = false }: { timeoutMs?: number; underWay?: boolean } = {}) {
    await prepare();
    const reached = () => (underWay ? visible() : applied);
    if (position <= reached()) return;
    const started = Date.now();
    let expired = false;
    let deadline: NodeJS.Timeout | undefined;
    let pause: NodeJS.Timeout | undefined;
    const expiry = new Promise<void>((resolve) => (deadline = setTimeout(() => resolve(void (expired = true)), timeoutMs)));
    const waiter = { position, underWay, reached: () => undefined as void };
    const told = new Promise<void>((resolve) => (waiter.reached = resolve));
    waiters.add(waiter);
    try {
      // A catch-up that ends short of the position (the store does not show its events yet:
      // PostgreSQL until older transactions end; or it failed) is asked for again after a short
      // pause, doubling.
      for (let again = 1; reached() < position; again = Math.min(2 * again, 50)) {
        if (expired) throw new ReadModelBehind(position, reached(), Date.now() - started);
        const thenPause = () => new Promise<void>((resolve) => (pause = setTimeout(resolve, again)));
        await Promise.race([told, expiry, requestCatchUp().then(thenPause, thenPause)]);
      }
    } finally {
      clearTimeout(deadline);
      clearTimeout(pause);
      waiters.delete(waiter);
    }
  }

  /**
   * A live catch-up that failed (a lock another session held past the store's wait, a connection
   * cut) is asked for again, reading the store to its end, after a pause doubling up to
   * RETRY_MAX_MS until one succeeds: the subscription has moved past the events it signalled, and
   * on an idle system no read or write would ask again, so the read models (and the webhook feed)
   * would stay behind, /readyz 503 on every process, until the next write.
   */
  let retrying: NodeJS.Timeout | undefined;
  let retryPauseMs = RETRY_FIRST_MS;
  const retryLive = () => {
    if (retrying || holders.size === 0) return;
    retrying = setTimeout(() => {
      retrying = undefined;
      requestCatchUp().then(() => void (retryPauseMs = RETRY_FIRST_MS), retryLive);
    }, retryPauseMs);
    retryPauseMs = Math.min(2 * retryPauseMs, RETRY_MAX_MS);
  };

  const caughtUp = async (options?: { timeoutMs?: number }) => {
    const position = await head();
    await waitFor(position, options);
    return position;
  };
  /**
   * `read` once the reads answer every event up to the head at the call, the documents under way of
   * an ordered store included. Checked again in the turn the read starts (a synchronous store, the
   * one with documents under way, reads in it): a commit under way that failed since the wait ended
   * took its documents away, so the wait goes on (bounded by the one wait).
   */
  async function afterHead<T>(read: () => Promise<T>): Promise<T> {
    const position = await head();
    const deadline = Date.now() + waitMs;
    for (;;) {
      await waitFor(position, { timeoutMs: Math.max(0, deadline - Date.now()), underWay: true });
      if (visible() >= position) return read();
    }
  }
  const fresh: ProjectionRunner["fresh"] = {
    get: (projection, key) => afterHead(() => readModels.get(projection, key)),
    list: (projection, keyPrefix, page) => afterHead(() => readModels.list(projection, keyPrefix, page)),
    async query(projection, q) {
      if (readModels.queryAtHead) {
        await prepare();
        const { docs, atHead } = await readModels.queryAtHead<any>(projection, q);
        if (atHead) return docs;
      }
      return afterHead(() => readModels.query(projection, q));
    },
  };

  return {
    catchUp: requestCatchUp,
    waitFor,
    caughtUp,
    fresh,
    ready: prepare,
    rebuild: (name) =>
      serialized(async () => {
        if (!projections.some((p) => p.name === name)) throw new Error(`no projection ${name}`);
        await readModels.reset(name);
        return catchUpNow();
      }),
    join(fold) {
      const entry = joined.get(fold.name) ?? { fold, reached: new Set<(position: number) => void>() };
      joined.set(fold.name, entry);
      const reached = (position: number) => fold.reached(position);
      entry.reached.add(reached);
      return () => {
        entry.reached.delete(reached);
        if (entry.reached.size === 0 && joined.get(fold.name) === entry) joined.delete(fold.name);
      };
    },
    start(holder = LIVE) {
      const first = holders.size === 0;
      holders.add(holder);
      if (!first) return subscribing;
      // The subscription delivers the new events (kept for the catch-up: the tail) and signals; one
      // serialized catch-up does the work for all the events signalled while it was queued (a burst
      // costs one catch-up, not one per event), shared with the reads waiting for a position.
      const signal = (event: RecordedEvent) => {
        keep(event);
        void requestCatchUp(false).catch(retryLive);
      };
      // Subscribe from where the first catch-up got to: events already projected are not read again.
      // The store unavailable (an outage, a process started into one): tried again with a growing pause.
      subscribing = background.attempt(() => serialized(catchUpNow)).then((position) => {
        if (position === undefined || holders.size === 0) return;
        tail = { from: position, events: [] };
        subscription = store.subscribeToAll({ after: position }, signal);
      });
      return subscribing;
    },
    async stop(holder = LIVE) {
      holders.delete(holder);
      if (holders.size === 0) {
        clearTimeout(retrying);
        retrying = undefined;
        background.stop();
        await subscribing;
        await subscription?.close();
        subscription = undefined;
        tail = { from: 0, events: [] };
      }
      await queue.catch(() => undefined);
    },
  };
}
