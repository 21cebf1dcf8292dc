// The event-store port: the one interface every adapter (memory, SQLite, PostgreSQL, KurrentDB)
// implements. Shaped after EventStoreDB/KurrentDB semantics so that adapter stays thin:
// per-stream revisions from 0, a global position from 1, expected-revision checks, idempotent
// append by event id, ordered reads and catch-up subscriptions from a checkpoint.

/** Correlation data recorded with every event (DESIGN.md: "Events are the system of record"). */
export interface EventMetadata {
  /** When the fact happened, from the injected clock (ISO 8601 with offset). Never the store's clock. */
  timestamp: string;
  /** The API request that caused the event (integer, unique per request). */
  request_id: number;
  idempotency_key?: string | null;
  /** Who acted: an API key id, a terminal, a processor, the library caller. */
  actor?: string | null;
  /** Filled by the engine for tamper evidence (hash chain); adapters store it verbatim. */
  [key: string]: unknown;
}

/** An event as the engine hands it to the store. `id` is a UUID and the idempotency key of the append. */
export interface EventData {
  id: string;
  type: string;
  version: number;
  data: unknown;
  metadata: EventMetadata;
}

/** An event as the store returns it. */
export interface RecordedEvent extends EventData {
  stream: string;
  /** Position inside its stream, from 0. */
  revision: number;
  /** Position in the whole store, from 1, strictly increasing in commit order. */
  position: number;
}

/**
 * - a number: the stream's current last revision must be exactly this;
 * - "no_stream": the stream must not exist;
 * - "stream_exists": the stream must exist;
 * - "any": no check.
 */
export type ExpectedRevision = number | "no_stream" | "stream_exists" | "any";

export interface AppendOptions {
  expectedRevision: ExpectedRevision;
  /** Stored in the same transaction as the events (HTTP Idempotency-Key; see IdempotencyRecord). */
  idempotency?: IdempotencyRecord;
}

/** The remembered outcome of a request made with an Idempotency-Key. */
export interface IdempotencyRecord {
  /** Scoped key, e.g. `${account}:${Idempotency-Key}`. */
  key: string;
  /** Hash of method, path and body: the same key with another request is refused. */
  fingerprint: string;
  status: number;
  body: unknown;
  /** ISO 8601; the record may be purged after this. */
  expires_at: string;
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
  /** Events of every stream in global position order. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /**
   * Catch-up subscription: every event after the checkpoint exactly once, in global order, then
   * live events as they are committed. The handler is awaited before the next event is delivered.
   */
  subscribeToAll(options: SubscribeOptions, onEvent: (event: RecordedEvent) => Promise<void> | void): Subscription;
  /** Saves a record on its own (a request that appended nothing), replacing any with the same key. */
  saveIdempotency(record: IdempotencyRecord): Promise<void>;
  readIdempotency(key: string): Promise<IdempotencyRecord | undefined>;
  /** Deletes records that expired before `now` (ISO 8601); returns how many. */
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
  /** Documents whose key starts with the prefix, ordered by key. */
  list<T>(projection: string, keyPrefix: string): Promise<T[]>;
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
  close(): Promise<void>;
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

/** The check every ReadModelStore applies in commitBatch(); `actual` is 0 for a projection that never ran. */
export function checkCheckpoint(projection: string, expected: number | undefined, actual: number): void {
  if (expected !== undefined && expected !== actual) throw new CheckpointConflict(projection, expected, actual);
}
