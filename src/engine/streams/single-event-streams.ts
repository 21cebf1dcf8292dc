// Streams of one event that never changes once written: a merchant account, a terminal, an API
// key. Started once (a second start is refused by the store: WrongExpectedRevision), read once and
// then kept (bounded), since commands look these up on every call.
import type { DomainEvent } from "../../../machines/events.js";
import { setBounded } from "../../bounded.js";
import type { Clock } from "../../clock.js";
import { newEvents } from "../../events/new-events.js";
import type { Ids } from "../../ids.js";
import type { Appender, IdempotencyRecord, RecordedEvent, StreamReader } from "../../store/port.js";
import { eventMetadata, type CommandContext } from "../context.js";

export function createSingleEventStreams({ store, clock, ids, cacheSize }: { store: Appender & StreamReader; clock: Clock; ids: Ids; cacheSize: number }) {
  const firsts = new Map<string, RecordedEvent>();

  /** A new stream and its one event; WrongExpectedRevision if it exists. */
  async function startStream(stream: string, event: DomainEvent, ctx: CommandContext, idempotency?: IdempotencyRecord): Promise<void> {
    await store.append(stream, newEvents(stream, null, [event], eventMetadata(ctx, clock, ids), () => ids.uuid()), { expectedRevision: "no_stream", idempotency });
  }

  /** The stream's event (undefined when the stream does not exist), kept after the first read. */
  async function firstEvent(stream: string): Promise<RecordedEvent | undefined> {
    const known = firsts.get(stream);
    if (known) return known;
    const [first] = await store.readStream(stream, { maxCount: 1 });
    if (first) setBounded(firsts, stream, first, cacheSize);
    return first;
  }

  return { startStream, firstEvent };
}

export type SingleEventStreams = ReturnType<typeof createSingleEventStreams>;
