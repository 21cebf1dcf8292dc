// What every KurrentDB operation of the adapter shares: the client, the namespace's stream names,
// and the mapping between port events and KurrentDB events.
//
// - one KurrentDB stream per port stream, named `${namespace}${stream}` (the namespace lets several
//   logical stores, e.g. test runs, share one server);
// - event id -> the KurrentDB event id (a UUID), which the server uses for idempotent appends;
// - our metadata and schema version travel as one JSON string property (`cardflow`), because
//   multi-stream appends accept only string-valued metadata;
// - `position` is the event's *prepare* position in the transaction log: unique per event and
//   increasing in $all order, whereas the commit position is shared by all events of one append.
//   Positions have gaps and do not start at 1; Number() is exact up to 2^53 (8 PiB log).
import { jsonEvent, KurrentDBClient, StreamNotFoundError, type AllStreamResolvedEvent, type ResolvedEvent } from "@kurrent/kurrentdb-client";
import { upcast } from "../../../machines/event-versions.js";
import type { EventData, RecordedEvent } from "../port/events.js";

// Streams of the store's own bookkeeping, kept out of readAll and subscriptions.
const IDEMPOTENCY = "_idempotency-";
const SEQUENCE = "_sequence-";

export function kurrentClient(url: string, namespace: string) {
  const client = KurrentDBClient.connectionString(url);
  const idemPrefix = `${namespace}${IDEMPOTENCY}`;
  const sequenceStream = (sequence: string) => `${namespace}${SEQUENCE}${sequence}`;

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
    // upcast to the type's current schema version (machines/event-versions.ts)
    return upcast({
      id: e.id,
      type: e.type,
      version: meta.version,
      data: e.data,
      metadata: meta.metadata,
      stream: e.streamId.slice(namespace.length),
      revision: Number(e.revision),
      position: Number(e.position.prepare),
    });
  }

  /** A KurrentDB stream's events; an empty array when it does not exist. */
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

  return {
    client,
    namespace,
    idemPrefix,
    idemStream: (key: string) => `${idemPrefix}${key}`,
    sequenceStream,
    /** A stream of the port's (not bookkeeping, not a system stream). */
    ours: (kStream: string) => kStream.startsWith(namespace) && !kStream.startsWith(idemPrefix) && !kStream.startsWith(sequenceStream("")) && !kStream.startsWith("$"),
    toEvent,
    toRecorded,
    readStream,
  };
}

export type Kurrent = ReturnType<typeof kurrentClient>;
