// Appends to the events' file, group-committed. better-sqlite3 is synchronous, so append() only
// queues the request and schedules a flush with setImmediate. Every append that arrives before the
// flush runs (callers woken by the previous commit, requests that came in while it was written) is
// written in one transaction and one fsync. The batch's checks (retried ids, ids stored in another
// stream, expected revisions, idempotency claims) are made in memory against one lookup of its ids
// and one of its streams' heads, before its events are inserted: a failed check writes nothing of
// its append and rejects only its promise.
import type Database from "better-sqlite3";
import { checkExpectedRevision, type AppendOptions, type AppendResult, type Appender } from "../port/append.js";
import type { EventData } from "../port/events.js";
import { IdempotencyClaimLost, type IdempotencyRecord } from "../port/idempotency.js";
import { isBusy, translated } from "./open.js";

interface Pending {
  stream: string;
  events: EventData[];
  options: AppendOptions;
  resolve(r: AppendResult): void;
  reject(e: unknown): void;
  /** When it was queued (Date.now()): how long it has waited for the write lock. */
  since: number;
}

/** `wrote`: the append inserted events (a retry of stored ones, an empty append did not). */
type Outcome = { ok: true; result: AppendResult; wrote?: true } | { ok: false; error: unknown };

export interface SqliteAppender extends Appender {
  /**
   * The store's change mark (../port/read.ts): PRAGMA data_version, which counts other
   * connections' commits, and this connection's group commits (which it does not count); with a
   * stream, the last commit that carried an append to it (the total when that is no longer
   * remembered: a value that still changes with every later append to the stream).
   */
  changeMark(stream?: string): string;
  /** Refuses further appends; those already queued are still written. */
  close(): void;
}

/** Microtask turns a flush waits for its callers' next appends (a processor call that answers at once takes about ten). */
const FOLLOW_UP_TURNS = 32;
/** Flushes one turn of the event loop makes at most: each waits FOLLOW_UP_TURNS for the next. */
const FOLLOW_UP_ROUNDS = 3;
/** Streams whose last commit each connection remembers (a payment's status read needs only its own). */
const REMEMBERED_STREAMS = 100_000;

export function sqliteAppender(
  db: Database.Database,
  {
    busyTimeoutMs,
    replaceClaim,
    onCommit,
  }: {
    busyTimeoutMs: number;
    /** The idempotency record's replacement inside the batch's transaction (false: the claim was lost). */
    replaceClaim: (record: IdempotencyRecord) => boolean;
    /** After each group commit: how many appends it carried, and whether any of them wrote. */
    onCommit: (appends: number, wrote: boolean) => void;
  },
): SqliteAppender {
  const q = {
    // A batch's lookups, each one statement for the whole batch (a JSON array parameter);
    // the subquery per stream seeks the end of its (stream, revision) index range.
    byIds: db.prepare<[string], { id: string; stream: string; revision: number; position: number }>(
      "SELECT id, stream, revision, position FROM events WHERE id IN (SELECT value FROM json_each(?))",
    ),
    lasts: db.prepare<[string], { stream: string; revision: number | null }>(
      "SELECT value AS stream, (SELECT max(revision) FROM events WHERE stream = value) AS revision FROM json_each(?)",
    ),
    head: db.prepare<[], { position: number | null }>("SELECT max(position) AS position FROM events"),
    insert: db.prepare("INSERT INTO events (stream, revision, id, type, version, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)"),
    // changes whenever another connection (another process) commits; this connection's own commits leave it
    dataVersion: db.prepare<[], number>("PRAGMA data_version").pluck(),
  };

  /**
   * The batch inside the open transaction, in few statements: one lookup of its event ids already
   * stored (retries), one of its streams' last revisions, the checks in memory, then one INSERT per
   * event. Every check of an append comes before its first write, so a refused append writes
   * nothing and needs no savepoint (a savepoint journals every page the batch touches, past 64 KB
   * into a temporary file). Ids and heads are kept up to date as the batch is written, so a later
   * append of the same batch sees an earlier one. A statement that fails anyway throws: flush rolls
   * the whole batch back.
   */
  function applyBatch(batch: readonly Pending[]): Outcome[] {
    const stored = new Map(q.byIds.all(JSON.stringify(batch.flatMap((p) => p.events.map((e) => e.id)))).map((r) => [r.id, r]));
    const heads = new Map(q.lasts.all(JSON.stringify([...new Set(batch.map((p) => p.stream))])).map((r) => [r.stream, r.revision ?? -1]));
    return batch.map(({ stream, events, options }): Outcome => {
      const first = events[0] && stored.get(events[0].id);
      if (first && first.stream === stream) {
        const last = stored.get(events[events.length - 1]!.id) ?? first;
        return { ok: true, result: { nextRevision: last.revision, position: last.position } };
      }
      const current = heads.get(stream)!;
      try {
        checkExpectedRevision(stream, options.expectedRevision, current);
        const taken = events.find((e) => stored.has(e.id));
        if (taken) throw new Error(`append to ${stream}: event id ${taken.id} is already stored in stream ${stored.get(taken.id)!.stream}`);
        if (options.idempotency && !replaceClaim(options.idempotency)) throw new IdempotencyClaimLost(options.idempotency.key);
      } catch (error) {
        return { ok: false, error };
      }
      if (events.length === 0) return { ok: true, result: { nextRevision: current, position: q.head.get()?.position ?? 0 } };
      let position = 0;
      events.forEach((e, i) => {
        const revision = current + 1 + i;
        position = Number(q.insert.run(stream, revision, e.id, e.type, e.version, JSON.stringify(e.data), JSON.stringify(e.metadata)).lastInsertRowid);
        stored.set(e.id, { id: e.id, stream, revision, position });
      });
      heads.set(stream, current + events.length);
      return { ok: true, result: { nextRevision: current + events.length, position }, wrote: true };
    });
  }

  let queue: Pending[] = [];
  let scheduled = false;
  let commits = 0;
  /** A change mark: the other connections' commits (data_version) and this connection's commit. */
  const markOf = (otherCommits: number, commit: number) => `${otherCommits}:${commit}`;
  /** The commit that last carried an append to each stream, for the most recently written ones. */
  const lastCommitOf = new Map<string, number>();
  let closed = false;

  /** Writes the queue; false when it waits for another process's write lock (a retry scheduled). */
  function flush(): boolean {
    scheduled = false;
    if (queue.length === 0) return true;
    try {
      db.exec("BEGIN IMMEDIATE");
    } catch (error) {
      // Another process holds the write lock: the queue waits (and grows) without blocking the
      // event loop, up to busyTimeoutMs for its oldest append, then every append is refused.
      if (isBusy(error) && Date.now() - queue[0]!.since < busyTimeoutMs) {
        scheduled = true;
        setTimeout(flush, 10);
        return false;
      }
      const refused = queue;
      queue = [];
      for (const p of refused) p.reject(translated(error));
      return true;
    }
    const batch = queue;
    queue = [];
    let outcomes: Outcome[];
    // read under the write lock: no other connection commits until this COMMIT, so the streams
    // written stand as of it in the marks this batch's appends return
    const otherCommits = q.dataVersion.get()!;
    try {
      outcomes = applyBatch(batch);
      db.exec("COMMIT");
      commits++;
      for (const { stream } of batch) {
        lastCommitOf.delete(stream); // re-inserted last: the map's order is the writes' order
        lastCommitOf.set(stream, commits);
      }
      while (lastCommitOf.size > REMEMBERED_STREAMS) lastCommitOf.delete(lastCommitOf.keys().next().value!);
    } catch (error) {
      // a statement or the COMMIT failed (disk full, I/O error): nothing of the batch is durable
      if (db.inTransaction) db.exec("ROLLBACK");
      for (const p of batch) p.reject(translated(error));
      return true;
    }
    onCommit(batch.length, outcomes.some((o) => o.ok));
    batch.forEach((p, i) => {
      const o = outcomes[i]!;
      if (o.ok) p.resolve(o.wrote ? { ...o.result, mark: markOf(otherCommits, commits) } : o.result);
      else p.reject(o.error);
    });
    return true;
  }

  /**
   * A flush, then the appends its callers make within a few microtasks of being answered (an
   * attempt's outcome after a processor call that answered at once: the sandbox's, a refusal): in
   * this turn of the event loop, not after a whole turn more of other requests' work.
   */
  async function flushWithFollowUps() {
    for (let round = 1; flush() && round < FOLLOW_UP_ROUNDS; round++) {
      for (let turn = 0; turn < FOLLOW_UP_TURNS; turn++) await null;
      if (queue.length === 0) return;
    }
  }

  return {
    append(stream, events, options) {
      if (closed) return Promise.reject(new Error("SQLite event store is closed"));
      return new Promise<AppendResult>((resolve, reject) => {
        queue.push({ stream, events, options, resolve, reject, since: Date.now() });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flushWithFollowUps);
        }
      });
    },
    changeMark: (stream) => markOf(q.dataVersion.get()!, stream === undefined ? commits : (lastCommitOf.get(stream) ?? commits)),
    close() {
      closed = true;
      if (scheduled) flush();
    },
  };
}
