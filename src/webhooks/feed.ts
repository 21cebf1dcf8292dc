// The event feed: public events indexed from the event log by a checkpointed fold, so it can be
// rebuilt from position zero like any read model. Each public event is one row of a table read
// model under its global position, with its account and payment as indexed columns, for the three
// orders it is read in: every event (delivery's look-ups, `events tail`), one account's (the feed,
// webhook scans) and one payment's. (Earlier releases stored each event three times, a document
// per order: under the mixed load 2.4 of the 5.1 KB the live catch-up wrote per event.) The fold
// state of each stream and the webhook endpoints are committed in the same transaction, with the
// checkpoint each was read at (several processes fold alike; the loser folds again).
// The feed is a fold that joins the read models' runner (projections/runner.ts): one read of each
// batch of new events, one transaction for the projections' documents and the feed's, one live
// subscription; a feed without the engine's runner (the CLI's) gets one of its own.
import { randomBytes } from "node:crypto";
import { cursorCodec, fromRelease010, type CursorCodec } from "./cursor.js";
import { InvalidRequest } from "../errors.js";
import { createProjectionRunner, dropPastHead, type BatchFold, type ProjectionRunner } from "../../projections/runner.js";
import { outageTolerantStart, prepareOnce, type EventStore, type ReadModelShape, type ReadModelStore, type RecordedEvent, type TableShape } from "../store/port.js";
import { endpointOf, type EndpointDoc } from "./endpoints.js";
import type { AsAllowed } from "../../machines/fold.js";
import { publicEventOf, type PublicEvent, type PublicEventType, type StreamFold } from "../present/public-events.js";

/** A public event where the feed keeps it. */
export interface FeedEntry {
  position: number;
  /** The domain stream it came from: delivery keeps each stream in order. */
  stream: string;
  event: PublicEvent;
}

/**
 * The feed's read models: its entries, each stream's fold state, the webhook endpoints. They move
 * together (one fold, one checkpoint), so a change to one takes new names for all three, and the
 * earlier names are retired (RETIRED_PROJECTIONS, projections/registry.ts): during a rolling
 * upgrade the old processes keep folding their own (`public_events`, `public_event_streams`,
 * `webhook_endpoints`: each public event stored three times, as documents by position, by account
 * and by payment), the new ones these, and neither misses an event the other folded.
 */
export const FEED = { events: "feed_entries", streams: "feed_streams", endpoints: "feed_endpoints" } as const;

/** An entry's key: its position, zero-padded (text order is position order). */
export const feedKey = (position: number) => String(position).padStart(16, "0");

/** Which of the feed's orders a read follows: every public event, one account's, one payment's. */
/** Every account's entries, or one account's (of one of its payments: never another account's, whose positions would tell of its payment). */
export type FeedScope = "all" | { account: string; payment_id?: string };

const ENTRIES: TableShape<FeedEntry> = {
  columns: { account: "text", payment_id: "text" },
  fixed: ["account", "payment_id"],
  indexes: [
    ["account", "key"],
    ["payment_id", "key"],
  ],
  row: ({ event }) => ({ account: event.external_account_id, payment_id: event.payment_id }),
};

/** How each is stored (recorded in projections/read-model-shapes.json: never changed under its name). */
export const FEED_SHAPES: Record<(typeof FEED)[keyof typeof FEED], ReadModelShape> = {
  [FEED.events]: { version: 1, table: ENTRIES },
  [FEED.streams]: { version: 1 },
  [FEED.endpoints]: { version: 1 },
};
/** Each made once per store handle (a new version of one would need new names for all three: FEED). */
const PREPARED = Object.entries(FEED_SHAPES).map(([name, shape]) => prepareOnce(name, shape));

export interface FeedQuery {
  /** A next_cursor of a previous page of this account (opaque: ./cursor.ts); absent: from the beginning. */
  after?: string;
  limit?: number;
  types?: readonly PublicEventType[];
  payment_id?: string;
}

export interface FeedPage {
  data: PublicEvent[];
  /** Pass as `after` for the next page; stays valid forever (positions never change), for this account only. */
  next_cursor: string;
  has_more: boolean;
}

/** A stream's fold state in the feed (FEED.streams): its public events' sequence, or the endpoint it holds. */
export type Folded = StreamFold & { endpoint?: EndpointDoc };

/** The batch folded into the streams' states: changed states, feed entries, endpoints (the audit folds each stream with it too). */
export function foldBatch(batch: readonly RecordedEvent[], folded: Map<string, Folded>, asAllowed?: AsAllowed) {
  const changed = new Map<string, Folded>();
  const entries: Array<{ key: string; doc: FeedEntry }> = [];
  const endpoints: Array<{ key: string; doc: EndpointDoc }> = [];
  /** The accounts whose feed entries or endpoints the batch changed. */
  const accounts = new Set<string>();
  for (const e of batch) {
    const fold = changed.get(e.stream) ?? folded.get(e.stream);
    const endpoint = endpointOf(fold?.endpoint, e);
    if (endpoint) {
      changed.set(e.stream, { account: endpoint.external_account_id, sequence: 0, endpoint });
      endpoints.push({ key: `${endpoint.external_account_id}/${endpoint.endpoint_id}`, doc: endpoint });
      accounts.add(endpoint.external_account_id);
      continue;
    }
    const next = publicEventOf(fold, e, asAllowed);
    if (!next) continue;
    changed.set(e.stream, next.fold);
    if (!next.event) continue;
    const entry: FeedEntry = { position: e.position, stream: e.stream, event: next.event };
    accounts.add(next.event.external_account_id);
    entries.push({ key: feedKey(e.position), doc: entry });
  }
  return { changed, entries, endpoints, accounts };
}

export type EventFeed = ReturnType<typeof createEventFeed>;

export function createEventFeed({
  store,
  readModels,
  runner = createProjectionRunner({ store, readModels, projections: [] }),
  batchSize = 500,
  cursors = cursorCodec(randomBytes(32)),
  onError,
}: {
  store: EventStore;
  readModels: ReadModelStore;
  /** The catch-up the feed joins (the engine's: engine.projections); default, one of its own. */
  runner?: ProjectionRunner;
  /** Entries read per page while filtering. */
  batchSize?: number;
  cursors?: CursorCodec;
  /** Told of each failed catch-up start() waits out (logs). */
  onError?: (error: unknown) => void;
}) {
  const listeners = new Set<(accounts?: ReadonlySet<string>) => void>();
  /** The checkpoint the listeners last heard of. Another process may index first: our catch-up then
   * finds nothing to fold, yet the checkpoint moved and this process's workers must still wake. */
  let announced = 0;
  /** The batches this process folded and not yet announced (the next may be folded while one commits): the positions each covers, (from, last], and the accounts it touched. */
  let folded: Array<{ from: number; last: number; accounts: Set<string> }> = [];
  const announce = (checkpoint: number) => {
    if (checkpoint <= announced) return;
    // listeners hear which accounts moved when it was exactly the batches this process folded;
    // otherwise (other processes' batches) anything may have moved
    const mine = folded.filter((b) => b.from >= announced && b.last <= checkpoint);
    const exact = mine.length > 0 && mine.every((b, i) => b.from === (i === 0 ? announced : mine[i - 1]!.last)) && mine[mine.length - 1]!.last === checkpoint;
    announced = checkpoint;
    folded = folded.filter((b) => b.last > checkpoint);
    listeners.forEach((listener) => listener(exact ? new Set(mine.flatMap((b) => [...b.accounts])) : undefined));
  };
  /** Ends a start() still waiting for the store. */
  const background = outageTolerantStart(onError);
  let starting: Promise<void> | undefined;
  /** This feed, as a holder of the runner's live subscription (while started). */
  const holder = {};

  /** Before the feed's first fold or read: its three read models at their version (FEED_SHAPES), none past the events' head (a restore). */
  let checking: Promise<void> | undefined;
  let checked = false;
  const prepare = async () => {
    await Promise.all(PREPARED.map((prepared) => prepared(readModels)));
    // once, shared by concurrent first calls; then no await more (the live catch-up's turns)
    if (!checked) await (checking ??= dropPastHead(readModels, store, Object.values(FEED)).then(() => void (checked = true)));
  };

  /** The runner's batch, folded: entries, stream states and endpoints, committed in the batch's transaction. */
  const fold: BatchFold = {
    name: FEED.events,
    prepare,
    async fold(batch, checkpoint, last) {
      const events = batch.filter((e) => e.position > checkpoint);
      const stored = await readModels.getMany<Folded>(FEED.streams, [...new Set(events.map((e) => e.stream))]);
      const result = foldBatch(events, stored);
      folded = [...folded.filter((b) => b.last <= checkpoint), { from: checkpoint, last, accounts: result.accounts }]; // a fold again from `checkpoint` replaces what came after
      const commit = (projection: string, docs: Array<{ key: string; doc: unknown }>) => ({ projection, docs, checkpoint: last, expectedCheckpoint: checkpoint });
      return [commit(FEED.events, result.entries), commit(FEED.streams, [...result.changed].map(([key, doc]) => ({ key, doc }))), commit(FEED.endpoints, result.endpoints)];
    },
    reached: announce,
  };
  runner.join(fold);
  /** Indexes every event stored before the call (the runner's queued catch-up, shared); resolves with the feed's checkpoint. */
  const catchUp = async (): Promise<number> => {
    await runner.catchUp();
    return announced;
  };
  /**
   * For a read: waits until the feed holds every event acknowledged before the call, sharing the
   * wait with every other read and bounded (503 read_model_behind past it), never queued behind
   * a catch-up of its own; resolves with that head.
   */
  const caughtUp = (): Promise<number> => runner.caughtUp();

  /** Entries after a position, in the scope's order (by position). */
  async function entries(scope: FeedScope, after: number, limit: number): Promise<FeedEntry[]> {
    await prepare();
    if (scope === "all") return readModels.list<FeedEntry>(FEED.events, "", { after: feedKey(after), limit });
    const by = (where: Record<string, string>) => readModels.query<FeedEntry>(FEED.events, { where, order: ["key"], direction: "asc", after: [feedKey(after)], limit });
    if (scope.payment_id === undefined) return by({ account: scope.account });
    // by the payment's index; a payment is one account's, and another account's entries are not
    // given (their positions, in a cursor, would tell when that account's payment moved)
    return (await by({ payment_id: scope.payment_id })).filter((entry) => entry.event.external_account_id === scope.account);
  }

  /**
   * Where a cursor resumes in the scope. A 0.1.0 cursor (digits) is not sealed and may name any
   * position: it reads as the scope's last entry at or before it, so its answers depend on the
   * account's own events alone (past the log's end it told another account how long the log is)
   * and an event appended before a position past the end is not skipped.
   */
  async function resumeAt(scope: Exclude<FeedScope, "all">, cursor: string | undefined, position: number): Promise<number> {
    if (!fromRelease010(cursor)) return position;
    await prepare();
    const where: Record<string, string> = scope.payment_id === undefined ? { account: scope.account } : { payment_id: scope.payment_id };
    const [last] = await readModels.query<FeedEntry>(FEED.events, { where, order: ["key"], direction: "desc", after: [feedKey(position + 1)], limit: 1 });
    return last?.event.external_account_id === scope.account ? last.position : 0;
  }

  return {
    catchUp,
    resumeAt,
    caughtUp,
    /** The store's head now: where a stream "from now on" starts, its events read as the feed indexes them (no wait). */
    head: (): Promise<number> => store.head(),
    entries,
    /** The entry at a position (undefined: no public event there, or not indexed yet). */
    async entry(position: number): Promise<FeedEntry | undefined> {
      await prepare();
      return readModels.get<FeedEntry>(FEED.events, feedKey(position));
    },
    /** The account-bound opaque cursors of this feed (./cursor.ts), for every surface that hands one out. */
    cursors,
    /**
     * Calls back after each batch the feed indexed (delivery wakes up on it), with the accounts whose
     * entries or endpoints it changed when this process folded it (undefined: any may have).
     */
    onIndexed(listener: (accounts?: ReadonlySet<string>) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    /** One account's public events after the cursor, oldest first. */
    async page(account: string, { after: afterCursor, limit = 100, types, payment_id }: FeedQuery): Promise<FeedPage> {
      const decoded = cursors.decode(account, afterCursor);
      // every event acknowledged before the read, within the bound every list waits (503 read_model_behind past it)
      const head = await caughtUp();
      const scope = payment_id === undefined ? { account } : { account, payment_id };
      const after = await resumeAt(scope, afterCursor, decoded);
      // a sealed cursor past the log's end (a store restored from before it was given): its pages
      // would stay empty while events arrive before it
      if (after > head) throw new InvalidRequest("after: this cursor is past the end of the feed (the store was restored from before it was given); pass 0 for the beginning of the feed", "after", "cursor_invalid");
      const data: PublicEvent[] = [];
      let cursor = after;
      let scanned = after;
      // filters are applied while reading: read on until the page is full (one more tells has_more)
      for (;;) {
        const chunk = await entries(scope, scanned, types ? Math.max(batchSize, limit + 1) : limit + 1);
        for (const entry of chunk) {
          if (entry.event.external_account_id !== account || (types && !types.includes(entry.event.type))) continue;
          if (data.length === limit) return { data, next_cursor: cursors.encode(account, cursor), has_more: true };
          data.push(entry.event);
          cursor = entry.position;
        }
        // the end: what was read past the last match matched nothing, so the next page starts after it
        // (a filtered poller does not read it again on every poll)
        if (chunk.length === 0 || !types) return { data, next_cursor: cursors.encode(account, Math.max(cursor, chunk.at(-1)?.position ?? scanned)), has_more: false };
        scanned = chunk[chunk.length - 1]!.position;
      }
    },

    /**
     * Keeps the feed indexed as events are appended (the runner's live subscription, held while
     * started). The first catch-up is tried again, with a growing pause, while the store is
     * unavailable: a process started into an outage waits it out (its API answers 503 meanwhile)
     * instead of dying.
     */
    start(): Promise<void> {
      // once: the delivery and every event stream share it (a stream's start runs no catch-up of its own)
      starting ??= (async () => {
        if ((await background.attempt(catchUp)) === undefined) return;
        await runner.start(holder);
      })().catch((err: unknown) => {
        starting = undefined;
        throw err;
      });
      return starting;
    },
    async stop(): Promise<void> {
      starting = undefined;
      background.stop();
      await runner.stop(holder);
    },
  };
}
