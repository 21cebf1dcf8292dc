// The event-store port: the one interface every adapter (memory, SQLite, PostgreSQL, KurrentDB)
// implements. Shaped after EventStoreDB/KurrentDB semantics so that adapter stays thin:
// per-stream revisions from 0, a global position from 1, expected-revision checks, idempotent
// append by event id, ordered reads and catch-up subscriptions from a checkpoint.
import { CardflowError } from "../errors.js";

// the envelope of an event (src/events/envelope.ts): what adapters store and return
import type { EventData, RecordedEvent } from "../events/envelope.js";
export type { EventData, EventMetadata, RecordedEvent } from "../events/envelope.js";

/**
 * - a number: the stream's current last revision must be exactly this;
 * - "no_stream": the stream must not exist;
 * - "stream_exists": the stream must exist;
 * - "any": no check.
 */
export type ExpectedRevision = number | "no_stream" | "stream_exists" | "any";

export interface AppendOptions {
  expectedRevision: ExpectedRevision;
  /**
   * Replaces the Idempotency-Key record of the same key and token in the same transaction as the
   * events. When the key is no longer claimed by this token, throws IdempotencyClaimLost and
   * appends nothing.
   */
  idempotency?: IdempotencyRecord;
}

/**
 * One request made with an Idempotency-Key, as the store keeps it: first its claim (in_flight),
 * then its answer (done). The key is unique in the store: a second request cannot claim it.
 */
export interface IdempotencyRecord {
  /** Scoped key, e.g. `${account}:${Idempotency-Key}`. */
  key: string;
  /** Hash of the request (method, path and body): the same key with another request is refused. */
  fingerprint: string;
  /** Unique per claiming request: only that request may replace or release its claim. */
  token: string;
  /**
   * in_flight: the request runs (or its process died); `expires_at` ends its lease.
   * done: the final answer, kept until `expires_at`.
   */
  state: "in_flight" | "done";
  /** The answer. While in flight: the one recorded with the events appended so far (status 0, body null before any). */
  status: number;
  body: unknown;
  /** ISO 8601 (UTC, compared as text). */
  expires_at: string;
}

/**
 * Whether a record still holds its key at `now`: a done answer until it expires; a claim until its
 * lease ends, and after that only when an answer was recorded with its events (the request acted:
 * a retry must replay that answer, never act again).
 */
export const holdsKey = (r: Pick<IdempotencyRecord, "state" | "status" | "expires_at">, now: string) =>
  r.expires_at >= now || (r.state === "in_flight" && r.status !== 0);

/**
 * 503: the store cannot be reached right now (a lost connection, the database restarting, another
 * process holding SQLite's write lock past the bound). Nothing was acknowledged; retry later.
 */
export class StoreUnavailable extends CardflowError {
  override readonly name = "StoreUnavailable";
  readonly status = 503;
  readonly code = "store_unavailable";
  /** Seconds after which a retry is worth it (the HTTP Retry-After). */
  readonly retryAfterSeconds = 1;
  constructor(reason: string, options?: ErrorOptions) {
    super(`the service's database is unavailable (${reason}); retry later`, options);
  }
}

/** The request's claim on its Idempotency-Key was taken over by another (its lease ran out). */
export class IdempotencyClaimLost extends Error {
  override readonly name = "IdempotencyClaimLost";
  constructor(readonly key: string) {
    super(`Idempotency-Key ${key}: the claim is no longer this request's`);
  }
}

export interface AppendResult {
  /** Revision of the last event of the stream after the append. */
  nextRevision: number;
  /** Global position of the last appended event. */
  position: number;
}

export interface ReadStreamOptions {
  /** First revision to read (inclusive). Forwards default 0; backwards default the end. */
  fromRevision?: number;
  direction?: "forwards" | "backwards";
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Read events whose position is strictly greater than this checkpoint. Default 0 (everything). */
  after?: number;
  maxCount?: number;
}

export interface SubscribeOptions {
  /** Deliver events after this checkpoint (exclusive), then live ones. Default 0. */
  after?: number;
  /** Only streams whose name starts with one of these prefixes. */
  streamPrefixes?: string[];
}

export interface Subscription {
  close(): Promise<void>;
}

export interface EventStore {
  /**
   * Appends atomically. Throws WrongExpectedRevision when the check fails and appends nothing.
   * Idempotent by event id: appending events whose ids are already stored in this stream
   * (a retried append) stores nothing new and returns the original result.
   */
  append(stream: string, events: EventData[], options: AppendOptions): Promise<AppendResult>;
  /** Events of one stream; an empty array when the stream does not exist. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /**
   * Optional, for stores that answer it without a round trip: a value that changes whenever an
   * append may have committed (through this object, another connection or another process). Taken
   * before a read, the same value later proves nothing was appended since that read, so a state
   * folded from it is still current (the engine's status read: src/engine/payment-streams.ts).
   */
  changeMark?(): number | string;
  /** Events of every stream in global position order. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /**
   * Catch-up subscription: every event after the checkpoint exactly once, in global order, then
   * live events as they are committed. The handler is awaited before the next event is delivered.
   */
  subscribeToAll(options: SubscribeOptions, onEvent: (event: RecordedEvent) => Promise<void> | void): Subscription;
  /**
   * Claims an Idempotency-Key: stores `claim` (in_flight, status 0) unless a record holds the key
   * (holdsKey); returns undefined when claimed, else the record holding it. One atomic statement
   * against the key's unique constraint, so of concurrent claimants (in any process) one wins.
   */
  claimIdempotency(claim: IdempotencyRecord, now: string): Promise<IdempotencyRecord | undefined>;
  /** Replaces the record of the same key and token (a request without events, the final answer); false when the key is no longer this token's. */
  saveIdempotency(record: IdempotencyRecord): Promise<boolean>;
  /**
   * Ends the claim of a request that failed: deleted when no answer was recorded (it had no effect,
   * a retry may run), otherwise done with the recorded answer until `expires_at`.
   */
  releaseIdempotency(key: string, token: string, expires_at: string): Promise<void>;
  readIdempotency(key: string): Promise<IdempotencyRecord | undefined>;
  /**
   * Reserves `count` consecutive integers of a named sequence (from 1): returns the first. No two
   * calls, from any process on this store, get overlapping ranges (request ids: src/ids.ts).
   */
  reserveIds(sequence: string, count: number): Promise<number>;
  /** Deletes records that no longer hold their key at `now` (ISO 8601); returns how many. */
  purgeIdempotency(now: string): Promise<number>;
  close(): Promise<void>;
}

export class WrongExpectedRevision extends Error {
  override readonly name = "WrongExpectedRevision";
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    /** The stream's last revision, or -1 when it does not exist. */
    readonly actual: number,
  ) {
    super(`stream ${stream}: expected revision ${String(expected)}, actual ${actual}`);
  }
}

/** The check every adapter applies; `actual` is -1 for a stream that does not exist. */
export function checkExpectedRevision(stream: string, expected: ExpectedRevision, actual: number): void {
  const ok =
    expected === "any" ||
    (expected === "no_stream" && actual === -1) ||
    (expected === "stream_exists" && actual >= 0) ||
    expected === actual;
  if (!ok) throw new WrongExpectedRevision(stream, expected, actual);
}

/**
 * Read models live beside the events: documents keyed per projection, written together with the
 * projection's checkpoint in one transaction, so a restarted projection resumes exactly where its
 * documents are (no loss, no double application).
 */
export interface ReadModelStore {
  /** Last global position applied to this projection; 0 when it never ran (and then it has no documents). */
  checkpoint(projection: string): Promise<number>;
  get<T>(projection: string, key: string): Promise<T | undefined>;
  /** The stored documents among `keys`, by key (keys without a document are absent): one read for a batch. */
  getMany<T>(projection: string, keys: readonly string[]): Promise<Map<string, T>>;
  /** Documents whose key starts with the prefix, ordered by key (a page: keys after `after`, at most `limit`). */
  list<T>(projection: string, keyPrefix: string, page?: ListPage): Promise<T[]>;
  /** How many documents the projection has (audits compare it without loading them). */
  count(projection: string): Promise<number>;
  /**
   * Upserts each projection's documents and sets its checkpoint, all of them in one transaction.
   * A commit with `expectedCheckpoint` applies only if that projection's stored checkpoint (0 when
   * none) still equals it; if any differs, the whole batch throws CheckpointConflict and writes
   * nothing: several processes updating the same projections then never apply an event twice (the
   * loser re-reads its checkpoints and documents and folds again).
   */
  commitBatch(commits: readonly ProjectionCommit[]): Promise<void>;
  /** Drops every document and the checkpoint of the projection (rebuild from zero). */
  reset(projection: string): Promise<void>;
  /**
   * Runs `work`, a catch-up from zero (the runner's), whose commits the store may leave unsynced
   * until `work` ends, when it makes them durable: atomic and visible as always, only a power loss
   * meanwhile costs more (SQLite: the read models' file is rebuilt, docs/stores.md). Absent: the
   * store's commits cost the same either way.
   */
  bulk?<T>(work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A page of a key-ordered listing: keys strictly after `after`, at most `limit` documents. */
export interface ListPage {
  after?: string;
  limit?: number;
}

/** One projection's part of a commitBatch(). */
export interface ProjectionCommit {
  projection: string;
  docs: ReadonlyArray<{ key: string; doc: unknown }>;
  checkpoint: number;
  expectedCheckpoint?: number;
}

export class CheckpointConflict extends Error {
  override readonly name = "CheckpointConflict";
  constructor(
    readonly projection: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`projection ${projection}: expected checkpoint ${expected}, actual ${actual}`);
  }
}

/** Runs `attempt` again while it ends in a CheckpointConflict (another process committed first: read again). */
export async function retryOnCheckpointConflict<T>(attempt: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof CheckpointConflict)) throw error;
    }
  }
}

/** The check every ReadModelStore applies in commitBatch(); `actual` is 0 for a projection that never ran. */
export function checkCheckpoint(projection: string, expected: number | undefined, actual: number): void {
  if (expected !== undefined && expected !== actual) throw new CheckpointConflict(projection, expected, actual);
}
