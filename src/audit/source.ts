// Where audits read from: an event store (any adapter of the port) and, optionally, the read
// models the service keeps beside it, which audits compare with a fresh replay.
import type { EventStore, ReadModelStore, RecordedEvent } from "../store/port.js";

export interface AuditSource {
  store: EventStore;
  readModels?: ReadModelStore;
}

export const PAYMENT_STREAM_PREFIX = "payment-";

export const paymentIdOf = (stream: string): string | null =>
  stream.startsWith(PAYMENT_STREAM_PREFIX) ? stream.slice(PAYMENT_STREAM_PREFIX.length) : null;

/** Every stored event in global order, a batch at a time (a whole store need not fit one read). */
export async function* batchesOf(store: EventStore, batchSize = 2000): AsyncGenerator<RecordedEvent[]> {
  let after = 0;
  for (;;) {
    const batch = await store.readAll({ after, maxCount: batchSize });
    if (batch.length === 0) return;
    yield batch;
    after = batch[batch.length - 1]!.position;
  }
}

/** Reports progress of a long run: events done so far. */
export type OnProgress = (progress: { events: number; streams: number }) => void;

/**
 * A read-only event store over recorded events as they are (an export file, a copy under
 * investigation): nothing is verified or renumbered, so audits see exactly what is there.
 */
export function eventsStore(events: readonly RecordedEvent[]): EventStore {
  const all = [...events].sort((a, b) => a.position - b.position);
  const readOnly = async (): Promise<never> => {
    throw new Error("this event source is read-only");
  };
  return {
    append: readOnly,
    async readStream(stream, { fromRevision, direction = "forwards", maxCount = Number.MAX_SAFE_INTEGER } = {}) {
      const list = all.filter((e) => e.stream === stream).sort((a, b) => a.revision - b.revision);
      if (direction === "forwards") return structuredClone(list.slice(fromRevision ?? 0).slice(0, maxCount));
      return structuredClone(list.slice(0, (fromRevision ?? list.length - 1) + 1).reverse().slice(0, maxCount));
    },
    async readAll({ after = 0, maxCount = Number.MAX_SAFE_INTEGER } = {}) {
      return structuredClone(all.filter((e) => e.position > after).slice(0, maxCount));
    },
    subscribeToAll() {
      throw new Error("this event source is read-only: no subscriptions");
    },
    claimIdempotency: readOnly,
    saveIdempotency: readOnly,
    releaseIdempotency: readOnly,
    readIdempotency: async () => undefined,
    reserveIds: readOnly,
    purgeIdempotency: readOnly,
    close: async () => undefined,
  };
}
