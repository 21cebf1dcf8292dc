// Appends: expected revision -> streamState (the server checks it); a retry the server refuses
// with a wrong expected version is recognised by reading back the revisions it would have written
// and comparing ids. With an idempotency record, events and record go in one multiStreamAppend.
import { NO_STREAM, WrongExpectedVersionError, type AppendStreamState } from "@kurrent/kurrentdb-client";
import { WrongExpectedRevision, type Appender, type AppendResult, type ExpectedRevision } from "../port/append.js";
import type { EventData } from "../port/events.js";
import { IdempotencyClaimLost } from "../port/idempotency.js";
import type { Kurrent } from "./client.js";
import type { kurrentIdempotency } from "./idempotency.js";

const streamState = (e: ExpectedRevision): AppendStreamState => (typeof e === "number" ? BigInt(e) : e);

export function kurrentAppender(k: Kurrent, { lastIdempotency, idempotencyEvent }: ReturnType<typeof kurrentIdempotency>): Appender {
  const { client, namespace } = k;

  /** The append's result: the event at the revision the server says it wrote last, for its position. */
  const resultAt = async (kStream: string, revision: bigint): Promise<AppendResult> => {
    const [last] = await k.readStream(kStream, { fromRevision: revision, maxCount: 1 });
    return { nextRevision: last!.revision, position: last!.position };
  };

  /** A retried append: the events at the revisions it targeted carry the same ids. */
  async function priorResult(kStream: string, events: EventData[], expected: ExpectedRevision): Promise<AppendResult | undefined> {
    if (typeof expected !== "number" && expected !== "no_stream") return undefined;
    const from = expected === "no_stream" ? 0 : expected + 1;
    const stored = await k.readStream(kStream, { fromRevision: BigInt(from), maxCount: events.length });
    if (stored.length !== events.length || stored.some((s, i) => s.id !== events[i]!.id)) return undefined;
    const last = stored[stored.length - 1]!;
    return { nextRevision: last.revision, position: last.position };
  }

  return {
    async append(stream, events, { expectedRevision, idempotency }) {
      const kStream = namespace + stream;
      let revision: bigint;
      try {
        if (idempotency) {
          // The claim read here must still be the last record when both streams are written.
          const held = await lastIdempotency(idempotency.key);
          if (held?.record.token !== idempotency.token) throw new IdempotencyClaimLost(idempotency.key);
          const { responses } = await client.multiStreamAppend([
            { streamName: kStream, events: events.map(k.toEvent), expectedState: streamState(expectedRevision) },
            { streamName: k.idemStream(idempotency.key), events: [idempotencyEvent(idempotency)], expectedState: held.revision },
          ]);
          revision = responses.find((r) => r.streamName === kStream)!.revision;
        } else {
          revision = (await client.appendToStream(kStream, events.map(k.toEvent), { streamState: streamState(expectedRevision) })).nextExpectedRevision;
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
  };
}
