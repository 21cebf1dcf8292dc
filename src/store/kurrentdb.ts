// KurrentDB (EventStoreDB) adapter over the official client. Nothing here has run against a
// server on the development machines (none can run there); see docs/stores.md for what was and
// was not verified. The contract suite runs against it when KURRENTDB_URL is set.
//
// Mapping:
// - one KurrentDB stream per port stream, named `${namespace}${stream}` (the namespace lets several
//   logical stores, e.g. test runs, share one server);
// - expected revision -> streamState (no_stream, stream_exists, any, or a bigint revision);
// - event id -> the KurrentDB event id (a UUID), which the server uses for idempotent appends;
//   a retry the server refuses with a wrong expected version is recognised by reading back the
//   revisions it would have written and comparing ids;
// - our metadata and schema version travel as one JSON string property (`cardflow`), because
//   multi-stream appends accept only string-valued metadata;
// - `position` is the event's *prepare* position in the transaction log: unique per event and
//   increasing in $all order, whereas the commit position is shared by all events of one append.
//   To resume after position p we start $all at {commit: p, prepare: p} and drop events at or
//   before p. Positions have gaps and do not start at 1; Number() is exact up to 2^53 (8 PiB log).
// - idempotency records live in `${namespace}_idempotency-${key}` streams, written in the same
//   atomic multiStreamAppend as the events (needs KurrentDB >= 25.1); readAll and subscriptions
//   leave those streams out. A claim, and the answer replacing it, is an append expecting the
//   revision of the record it read: the stream's optimistic check plays the unique key.
import { randomUUID } from "node:crypto";
import {
  BACKWARDS,
  END,
  excludeSystemEvents,
  FORWARDS,
  jsonEvent,
  KurrentDBClient,
  NO_STREAM,
  START,
  StreamNotFoundError,
  streamNameFilter,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type AppendStreamState,
  type Filter,
  type ReadPosition,
  type ResolvedEvent,
} from "@kurrent/kurrentdb-client";
import {
  holdsKey,
  IdempotencyClaimLost,
  WrongExpectedRevision,
  type AppendOptions,
  type AppendResult,
  type EventData,
  type EventStore,
  type ExpectedRevision,
  type IdempotencyRecord,
  type RecordedEvent,
  type Subscription,
} from "./port.js";

export interface KurrentStoreOptions {
  /** Connection string, e.g. `kurrentdb://localhost:2113?tls=false`. */
  url: string | undefined;
  /** Prefix of every stream this store writes and reads. Default "". */
  namespace?: string;
  /** Wait before re-subscribing after a dropped subscription (ms). Default 1,000. */
  retryMs?: number;
}

// Streams of the store's own bookkeeping, kept out of readAll and subscriptions.
const IDEMPOTENCY = "_idempotency-";
const SEQUENCE = "_sequence-";

const streamState = (e: ExpectedRevision): AppendStreamState => (typeof e === "number" ? BigInt(e) : e);

export async function createKurrentStore({ url, namespace = "", retryMs = 1000 }: KurrentStoreOptions): Promise<EventStore> {
  if (!url) throw new Error("KurrentDB store needs a connection string (set KURRENTDB_URL, e.g. kurrentdb://localhost:2113?tls=false)");
  const client = KurrentDBClient.connectionString(url);
  const idemPrefix = `${namespace}${IDEMPOTENCY}`;
  const idemStream = (key: string) => `${idemPrefix}${key}`;
  const sequenceStream = (sequence: string) => `${namespace}${SEQUENCE}${sequence}`;
  const ours = (kStream: string) =>
    kStream.startsWith(namespace) && !kStream.startsWith(idemPrefix) && !kStream.startsWith(sequenceStream("")) && !kStream.startsWith("$");

  const toEvent = (data: EventData) =>
    jsonEvent({
      id: data.id,
      type: data.type,
      data: data.data as Record<string, unknown>,
      metadata: { cardflow: JSON.stringify({ version: data.version, metadata: data.metadata }) },
    });

  function toRecorded(r: ResolvedEvent["event"] | AllStreamResolvedEvent["event"]): RecordedEvent {
    const e = r!;
    const meta = JSON.parse((e.metadata as { cardflow: string }).cardflow) as Pick<EventData, "version" | "metadata">;
    if (!e.position) throw new Error("KurrentDB returned an event without a log position (server older than 22.6?)");
    return {
      id: e.id,
      type: e.type,
      version: meta.version,
      data: e.data,
      metadata: meta.metadata,
      stream: e.streamId.slice(namespace.length),
      revision: Number(e.revision),
      position: Number(e.position.prepare),
    };
  }

  async function readStream(kStream: string, options: Parameters<KurrentDBClient["readStream"]>[1]): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    try {
      for await (const r of client.readStream(kStream, options)) if (r.event) out.push(toRecorded(r.event));
    } catch (e) {
      if (e instanceof StreamNotFoundError) return [];
      throw e;
    }
    return out;
  }

  /** The append's result: the event at the revision the server says it wrote last, for its position. */
  const resultAt = async (kStream: string, revision: bigint): Promise<AppendResult> => {
    const [last] = await readStream(kStream, { fromRevision: revision, maxCount: 1 });
    return { nextRevision: last!.revision, position: last!.position };
  };

  /** A retried append: the events at the revisions it targeted carry the same ids. */
  async function priorResult(kStream: string, events: EventData[], expected: ExpectedRevision): Promise<AppendResult | undefined> {
    if (typeof expected !== "number" && expected !== "no_stream") return undefined;
    const from = expected === "no_stream" ? 0 : expected + 1;
    const stored = await readStream(kStream, { fromRevision: BigInt(from), maxCount: events.length });
    if (stored.length !== events.length || stored.some((s, i) => s.id !== events[i]!.id)) return undefined;
    const last = stored[stored.length - 1]!;
    return { nextRevision: last.revision, position: last.position };
  }

  // $all from a port position: the server starts at {p, p}; events at or before p are dropped.
  const fromPosition = (after: number): ReadPosition => (after > 0 ? { commit: BigInt(after), prepare: BigInt(after) } : START);
  const filterFor = (prefixes?: string[]): Filter =>
    prefixes ? streamNameFilter({ prefixes: prefixes.map((p) => namespace + p) }) : namespace ? streamNameFilter({ prefixes: [namespace] }) : excludeSystemEvents();

  const subscriptions = new Set<Subscription>();

  const store: EventStore = {
    async append(stream, events, { expectedRevision, idempotency }: AppendOptions) {
      const kStream = namespace + stream;
      let revision: bigint;
      try {
        if (idempotency) {
          // The claim read here must still be the last record when both streams are written.
          const held = await lastIdempotency(idempotency.key);
          if (held?.record.token !== idempotency.token) throw new IdempotencyClaimLost(idempotency.key);
          const { responses } = await client.multiStreamAppend([
            { streamName: kStream, events: events.map(toEvent), expectedState: streamState(expectedRevision) },
            { streamName: idemStream(idempotency.key), events: [idempotencyEvent(idempotency)], expectedState: held.revision },
          ]);
          revision = responses.find((r) => r.streamName === kStream)!.revision;
        } else {
          revision = (await client.appendToStream(kStream, events.map(toEvent), { streamState: streamState(expectedRevision) })).nextExpectedRevision;
        }
      } catch (e) {
        if (!(e instanceof WrongExpectedVersionError)) throw e;
        if (idempotency && (await lastIdempotency(idempotency.key))?.record.token !== idempotency.token) throw new IdempotencyClaimLost(idempotency.key);
        const prior = await priorResult(kStream, events, expectedRevision);
        if (prior) return prior;
        throw new WrongExpectedRevision(stream, expectedRevision, e.actualState === NO_STREAM ? -1 : Number(e.actualState));
      }
      return resultAt(kStream, revision);
    },

    async readStream(stream, { fromRevision, direction = "forwards", maxCount } = {}) {
      return readStream(namespace + stream, {
        direction: direction === "forwards" ? FORWARDS : BACKWARDS,
        fromRevision: fromRevision !== undefined ? BigInt(fromRevision) : direction === "forwards" ? START : END,
        ...(maxCount !== undefined && { maxCount }),
      });
    },

    async readAll({ after = 0, maxCount = Number.MAX_SAFE_INTEGER } = {}) {
      const out: RecordedEvent[] = [];
      if (maxCount <= 0) return out;
      for await (const r of client.readAll({ fromPosition: fromPosition(after), filter: filterFor() })) {
        if (!r.event || !ours(r.event.streamId)) continue;
        const e = toRecorded(r.event);
        if (e.position <= after) continue;
        out.push(e);
        if (out.length >= maxCount) break;
      }
      return out;
    },

    subscribeToAll({ after = 0, streamPrefixes }, onEvent): Subscription {
      let checkpoint = after; // client-side: the caller stores it; we resume from it after a drop
      let closed = false;
      let current: { unsubscribe(): Promise<void> } | undefined;
      const loop = (async () => {
        while (!closed) {
          const sub = client.subscribeToAll({ fromPosition: fromPosition(checkpoint), filter: filterFor(streamPrefixes) });
          current = sub;
          try {
            for await (const r of sub) {
              if (closed) break;
              if (!r.event || !ours(r.event.streamId)) continue;
              const e = toRecorded(r.event);
              if (e.position <= checkpoint) continue;
              await onEvent(e);
              checkpoint = e.position;
            }
          } catch {
            if (!closed) await new Promise((resolve) => setTimeout(resolve, retryMs));
          }
        }
      })();
      const subscription: Subscription = {
        async close() {
          closed = true;
          subscriptions.delete(subscription);
          await current?.unsubscribe().catch(() => undefined);
          await loop;
        },
      };
      subscriptions.add(subscription);
      return subscription;
    },

    // Each write names the revision of the record it read: of two concurrent writers one wins.
    async claimIdempotency(claim, now) {
      for (;;) {
        const held = await lastIdempotency(claim.key);
        if (held && holdsKey(held.record, now)) return held.record;
        if (await writeIdempotency(claim, held ? held.revision : "no_stream")) return undefined;
      }
    },
    async saveIdempotency(record) {
      for (;;) {
        const held = await lastIdempotency(record.key);
        if (held?.record.token !== record.token) return false;
        if (await writeIdempotency(record, held.revision)) return true;
      }
    },
    async releaseIdempotency(key, token, expires_at) {
      for (;;) {
        const held = await lastIdempotency(key);
        if (held?.record.token !== token || held.record.state !== "in_flight") return;
        if (held.record.status === 0) {
          await client.deleteStream(idemStream(key), { expectedRevision: held.revision }).catch((e) => {
            if (!(e instanceof WrongExpectedVersionError)) throw e;
          });
          return;
        }
        if (await writeIdempotency({ ...held.record, state: "done", expires_at }, held.revision)) return;
      }
    },

    async readIdempotency(key) {
      return (await lastIdempotency(key))?.record;
    },

    // One stream per sequence; its last event holds the next integer. Appends expect the revision
    // read, so of two concurrent reservations one retries.
    async reserveIds(sequence, count) {
      const kStream = sequenceStream(sequence);
      for (;;) {
        const [last] = await readStream(kStream, { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
        const first = last ? (last.data as { next: number }).next : 1;
        const next = { id: randomUUID(), type: "sequence-reserved", version: 1, data: { next: first + count }, metadata: { timestamp: new Date(0).toISOString(), request_id: 0 } };
        try {
          await client.appendToStream(kStream, [toEvent(next)], { streamState: last ? BigInt(last.revision) : NO_STREAM });
          return first;
        } catch (e) {
          if (!(e instanceof WrongExpectedVersionError)) throw e;
        }
      }
    },
    async purgeIdempotency(now) {
      // Reads every idempotency stream once: fine for housekeeping, not for a hot path.
      const keys = new Set<string>();
      for await (const r of client.readAll({ filter: streamNameFilter({ prefixes: [idemPrefix] }) })) {
        if (r.event) keys.add(r.event.streamId.slice(idemPrefix.length));
      }
      let purged = 0;
      for (const key of keys) {
        const record = (await lastIdempotency(key))?.record;
        if (record && !holdsKey(record, now)) {
          await client.deleteStream(idemStream(key));
          purged++;
        }
      }
      return purged;
    },

    async close() {
      await Promise.all([...subscriptions].map((s) => s.close()));
      await client.dispose();
    },
  };

  /** The key's current record (the last event of its stream) and that event's revision. */
  async function lastIdempotency(key: string): Promise<{ record: IdempotencyRecord; revision: bigint } | undefined> {
    const [last] = await readStream(idemStream(key), { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
    return last && { record: last.data as IdempotencyRecord, revision: BigInt(last.revision) };
  }

  /** false when the stream is no longer at `expected` (another writer came first). */
  async function writeIdempotency(record: IdempotencyRecord, expected: bigint | "no_stream"): Promise<boolean> {
    try {
      await client.appendToStream(idemStream(record.key), [idempotencyEvent(record)], { streamState: expected });
      return true;
    } catch (e) {
      if (e instanceof WrongExpectedVersionError) return false;
      throw e;
    }
  }

  function idempotencyEvent(record: IdempotencyRecord) {
    return toEvent({ id: randomUUID(), type: "idempotency-record", version: 1, data: record, metadata: { timestamp: record.expires_at, request_id: 0 } });
  }

  return store;
}
