// Appends, group-committed: those arriving while batches are in flight go together in the next
// one, one statement and one commit for many streams (append_batch_set, migration 6; a batch of
// one append: append_one, migration 10); each keeps
// its own expected-revision check (expected_revision_holds, migration 7) and idempotency record,
// checked set-based for the whole batch. A batch the statement refuses as a whole goes again
// through append_batch_json (a savepoint per append), then one append at a time, so a bad append
// fails only its caller. Stream revisions are enforced by UNIQUE (stream, revision).
import { WrongExpectedRevision, type AppendOptions, type AppendResult, type Appender } from "../port/append.js";
import type { EventData } from "../port/events.js";
import { IdempotencyClaimLost } from "../port/idempotency.js";
import { StoreUnavailable } from "../port/unavailable.js";
import type { Statements } from "./pool.js";

/** Batches of appends in flight at once (each its own connection), and appends per batch. */
const BATCHES_IN_FLIGHT = 2;
const MAX_BATCH = 256;

/** What one append of a batch came to: its result, or the SQLSTATE that refused it (append_batch). */
interface Outcome {
  next_revision: string | null;
  last_position: string | null;
  code: string | null;
  detail: string | null;
  constraint_name: string | null;
}
interface Pending {
  stream: string;
  events: EventData[];
  options: AppendOptions;
  settle: (o: Outcome) => void;
  fail: (e: unknown) => void;
}

export interface PostgresAppender extends Appender {
  close(): void;
}

/** `committed(position)`: a batch committed appends up to `position` (wake subscribers, tell other processes). */
export function postgresAppender({ run, query }: Statements, committed: (position: number) => void): PostgresAppender {
  /** The original result of an append whose first event is already stored in this stream. */
  async function priorResult(stream: string, events: EventData[]): Promise<AppendResult | undefined> {
    if (events.length === 0) return undefined;
    const rows = await query<{ stream: string; revision: string; position: string }>(
      "SELECT stream, revision, position FROM events WHERE id = ANY($1) ORDER BY position",
      [[events[0]!.id, events[events.length - 1]!.id]],
    );
    const first = rows[0];
    if (!first || first.stream !== stream) return undefined;
    const last = rows[rows.length - 1]!;
    return { nextRevision: Number(last.revision), position: Number(last.position) };
  }

  const lastRevision = async (stream: string) =>
    Number((await query<{ r: string }>("SELECT coalesce(max(revision), -1) AS r FROM events WHERE stream = $1", [stream]))[0]!.r);

  // Group commit: an append that arrives while batches are in flight waits for the next one, so
  // many appends (of any streams) share one round trip and one commit (one WAL flush).
  const queue: Pending[] = [];
  let inFlight = 0;
  let closed = false;
  function flush() {
    while (inFlight < BATCHES_IN_FLIGHT && queue.length > 0) {
      const batch = queue.splice(0, MAX_BATCH);
      inFlight++;
      void commitAppends(batch).finally(() => {
        inFlight--;
        flush();
      });
    }
  }

  /**
   * One statement for the batch: append_batch_set, or append_batch_json (a block per append) when
   * the set-based statement failed as a whole. An error append_batch_json does not turn into a row
   * (not one of a connection) may be one append's own: each goes again alone, so it fails only its
   * own caller.
   */
  async function commitAppends(batch: Pending[], fn: "append_batch_set" | "append_batch_json" = "append_batch_set") {
    const all = batch.flatMap((p) => p.events);
    const idempotency = (p: Pending) => (p.options.idempotency ? JSON.stringify(p.options.idempotency) : null);
    const events = [all.map((e) => e.id), all.map((e) => e.type), all.map((e) => e.version), `[${all.map((e) => JSON.stringify(e.data)).join(",")}]`, `[${all.map((e) => JSON.stringify(e.metadata)).join(",")}]`];
    try {
      // a batch of one append (each commit at concurrency 1): append_one, the same answer for less work (migration 10)
      const one = fn === "append_batch_set" && batch.length === 1 ? batch[0]! : undefined;
      const { rows } = one
        ? await run<Outcome>("SELECT * FROM append_one($1, $2, $3, $4, $5, $6, $7, $8)", [one.stream, String(one.options.expectedRevision), idempotency(one), ...events], "cardflow_append_one")
        : await run<Outcome>(
            `SELECT * FROM ${fn}($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
            [batch.map((p) => p.stream), batch.map((p) => String(p.options.expectedRevision)), batch.map((p) => p.events.length), batch.map(idempotency), ...events],
            `cardflow_${fn}`,
          );
      batch.forEach((p, i) => p.settle(rows[i]!));
      committed(Math.max(0, ...rows.map((r) => (r.code === null ? Number(r.last_position) : 0))));
    } catch (e) {
      if (e instanceof StoreUnavailable) for (const p of batch) p.fail(e);
      else if (fn === "append_batch_set") await commitAppends(batch, "append_batch_json");
      else if (batch.length > 1) for (const p of batch) void commitAppends([p], "append_batch_json");
      else for (const p of batch) p.fail(e);
    }
  }

  const appendOnce = (stream: string, events: EventData[], options: AppendOptions) =>
    new Promise<Outcome>((settle, fail) => {
      queue.push({ stream, events, options, settle, fail });
      flush();
    });

  return {
    async append(stream, events, options) {
      if (closed) throw new Error("PostgreSQL event store is closed");
      for (;;) {
        const o = await appendOnce(stream, events, options);
        if (o.code === null) return { nextRevision: Number(o.next_revision), position: Number(o.last_position) };
        // A concurrent retry of the same events won the race: return what it stored.
        if (o.code === "23505" && o.constraint_name === "events_id_key") {
          const prior = await priorResult(stream, events);
          if (prior) return prior;
          throw new Error(`append to ${stream}: an event id is already stored in another stream (${o.detail})`);
        }
        if (o.code === "CF002") throw new IdempotencyClaimLost(options.idempotency!.key);
        if (o.code === "CF001") throw new WrongExpectedRevision(stream, options.expectedRevision, Number(o.detail));
        // Another transaction took the revision we read (or a deadlock between two of them, both
        // over the same stream). "any" and "stream_exists" still hold: try again.
        const { expectedRevision } = options;
        if (o.code === "40P01" || expectedRevision === "any" || expectedRevision === "stream_exists") continue;
        throw new WrongExpectedRevision(stream, expectedRevision, await lastRevision(stream));
      }
    },
    close() {
      closed = true;
    },
  };
}
