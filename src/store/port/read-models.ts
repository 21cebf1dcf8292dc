// Read models: documents per projection, written with the projection's checkpoint in one transaction.
import type { ColumnValue, ReadModelShape, TableQuery } from "./tables.js";

/**
 * A stored document that is not JSON (edited in the database): reading it fails with the document
 * named, so the one bad row can be found; the audit reports it and reads on.
 */
export class UnreadableDocument extends Error {
  override readonly name = "UnreadableDocument";
  constructor(readonly projection: string, readonly key: string, cause: unknown) {
    super(`read model ${projection}: document ${key} cannot be read: it is not JSON (${(cause as Error).message})`, { cause });
  }
}

/** A stored document's text parsed, or UnreadableDocument naming it. */
export function parseDocument<T>(projection: string, key: string, text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new UnreadableDocument(projection, key, error);
  }
}

/**
 * Read models live beside the events: documents keyed per projection, written together with the
 * projection's checkpoint in one transaction, so a restarted projection resumes exactly where its
 * documents are (no loss, no double application).
 */
export interface ReadModelStore {
  /** Last global position applied to this projection; 0 when it never ran (and then it has no documents). */
  checkpoint(projection: string): Promise<number>;
  /** checkpoint() of several projections, in their order, read at once (a catch-up reads every one). Absent: one by one. */
  checkpoints?(projections: readonly string[]): Promise<number[]>;
  /** The document, read-only (frozen: get, list and query may share one parse among readers, ./parsed-docs.ts). */
  get<T>(projection: string, key: string): Promise<T | undefined>;
  /** The stored documents among `keys`, by key (keys without a document are absent): one read for a batch, the caller's own to change (a fold's). */
  getMany<T>(projection: string, keys: readonly string[]): Promise<Map<string, T>>;
  /** Documents whose key starts with the prefix, ordered by key (a page: keys after `after`, at most `limit`), read-only. */
  list<T>(projection: string, keyPrefix: string, page?: ListPage): Promise<T[]>;
  /** The keys of the documents list() would return, in its order (audits name the documents no event explains). */
  keys(projection: string, keyPrefix: string, page?: ListPage): Promise<string[]>;
  /**
   * A table read model's stored columns (its shape's, besides key and doc) of the rows among `keys`,
   * by key: what its lists select and order on, which audits compare with the table's row() of the
   * document (a row edited by hand lists a payment under a status its document does not have).
   * Empty for a read model kept as documents. Absent: not offered (audits compare documents only).
   */
  columns?(projection: string, keys: readonly string[]): Promise<Map<string, Readonly<Record<string, ColumnValue>>>>;
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
  /**
   * True when commitBatch() calls apply in the order they were made, and a call may be made before
   * the one before it resolved, whose documents this handle's reads (get, getMany, list, query) then
   * answer at once, as if committed, until it resolves or fails. The runner folds its next batch
   * while a commit is under way, and tells the reads waiting for a position once it is posted.
   * Absent: one at a time.
   */
  readonly ordered?: boolean;
  /**
   * With `ordered`: how many commits under way failed so far, counted in the turn their documents
   * stop being answered (a read that relied on them must wait for what is stored), and how many
   * were refused at their call (counted before it returns: their documents were never answered).
   */
  readonly dropped?: number;
  /** Drops every document and the checkpoint of the projection (rebuild from zero). */
  reset(projection: string): Promise<void>;
  /**
   * Makes the projection's storage match `shape` before it is written: a table created with its
   * indexes, or documents by key. When what is stored was written at another version or shape
   * (or is a table no longer), it is dropped with the checkpoint and this answers true: the
   * projection is then folded from zero. Writing a table read model needs prepare() first on this
   * handle (its rows come from shape.table.row); reading it does not.
   */
  prepare(projection: string, shape: ReadModelShape): Promise<boolean>;
  /** A page of a table read model, read through an index: at most `limit` documents, in order, read-only. */
  query<T>(projection: string, query: TableQuery): Promise<T[]>;
  /**
   * query(), and whether, in the query's own snapshot, the projection's checkpoint had reached the
   * event store's head (false for an empty page: not known). Where the events and the read models
   * share a database (PostgreSQL): a read that must reflect every write acknowledged before it then
   * costs one round trip, not a read of the head and then the query. Absent: not offered.
   */
  queryAtHead?<T>(projection: string, query: TableQuery): Promise<{ docs: T[]; atHead: boolean }>;
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
