// Where audits read from: an event store (any adapter of the port) and, optionally, the read
// models the service keeps beside it, which audits compare with a fresh replay.
import { upcast } from "../../machines/event-versions.js";
import { UnreadableEvent, type EventStore, type ReadModelStore, type RecordedEvent } from "../store/port.js";
import type { MachineDefinitions } from "./machine-history.js";

export interface AuditSource {
  store: EventStore;
  readModels?: ReadModelStore;
  /** Definitions of the machine versions events may name (default: the package's docs/machines/<hash>.json). */
  machines?: MachineDefinitions;
}

export const PAYMENT_STREAM_PREFIX = "payment-";

export const paymentIdOf = (stream: string): string | null =>
  stream.startsWith(PAYMENT_STREAM_PREFIX) ? stream.slice(PAYMENT_STREAM_PREFIX.length) : null;

/** Events per read: what an audit holds of the store at a time, beside its per-stream results. */
export const PAGE_SIZE = 2000;

/** Called with each event a read could not parse (its data or metadata is not JSON), which is then skipped. */
export type OnUnreadable = (error: UnreadableEvent) => void;

/**
 * Pages of `read(from, maxCount)` from 0, `next` giving where the page after an event starts.
 * With `onUnreadable`, a read that fails on an event that cannot be parsed is retried in halves
 * until it stops short of it; that event is handed over and the reads go on past it, in full pages.
 */
async function* pages(read: (from: number, maxCount: number) => Promise<RecordedEvent[]>, next: (e: { revision: number; position: number }) => number, pageSize: number, onUnreadable?: OnUnreadable) {
  let [from, maxCount] = [0, pageSize];
  for (;;) {
    let page: RecordedEvent[];
    try {
      page = await read(from, maxCount);
    } catch (error) {
      if (!(error instanceof UnreadableEvent) || !onUnreadable) throw error;
      if (maxCount > 1) {
        maxCount = Math.floor(maxCount / 2);
        continue;
      }
      onUnreadable(error);
      [from, maxCount] = [next(error.event), pageSize];
      continue;
    }
    if (page.length === 0) return;
    yield page;
    from = next(page[page.length - 1]!); // still short of a failed read's event: the halved size reads on to it
  }
}

/** Every stored event in global order, a page at a time (a whole store need not fit one read). */
export const batchesOf = (store: EventStore, batchSize = PAGE_SIZE, onUnreadable?: OnUnreadable): AsyncGenerator<RecordedEvent[]> =>
  pages((after, maxCount) => store.readAll({ after, maxCount }), (e) => e.position, batchSize, onUnreadable);

/** A stream's events by revision, those that cannot be parsed handed to `onUnreadable` instead. */
export async function readableStream(store: EventStore, stream: string, onUnreadable: OnUnreadable): Promise<RecordedEvent[]> {
  try {
    return await store.readStream(stream);
  } catch (error) {
    if (!(error instanceof UnreadableEvent)) throw error;
  }
  // read again in pages, around what cannot be read
  const events: RecordedEvent[] = [];
  for await (const page of pages((fromRevision, maxCount) => store.readStream(stream, { fromRevision, maxCount }), (e) => e.revision + 1, PAGE_SIZE, onUnreadable)) events.push(...page);
  return events;
}

/**
 * The global position of the last stored event (0 for an empty store): the port has no count, so
 * it is found with reads of one event, doubling then bisecting (about 2·log2 of it reads). Long
 * runs use it as their total, so progress shows a percentage.
 */
export async function lastPosition(store: EventStore): Promise<number> {
  // an event that cannot be parsed is there all the same
  const after = (position: number) =>
    store.readAll({ after: position, maxCount: 1 }).then(
      (found) => found.length > 0,
      (error: unknown) => (error instanceof UnreadableEvent ? true : Promise.reject(error)),
    );
  if (!(await after(0))) return 0;
  // invariant: an event lies after `low`, none after `high`
  let low = 0;
  let high = 1024;
  while (await after(high)) [low, high] = [high, high * 2];
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (await after(middle)) low = middle;
    else high = middle;
  }
  return high;
}

/** Reports progress of a long run: the phase, and how much of its total is done. */
export type OnProgress = (progress: { phase: string; done: number; total: number; unit: "events" | "streams" }) => void;

/**
 * A read-only event store over recorded events as they are (an export file, a copy under
 * investigation): nothing is verified or renumbered, so audits see exactly what is there.
 */
export function eventsStore(events: readonly RecordedEvent[]): EventStore {
  // copies, upcast as every store reads them (the hash chain is verified on their stored form)
  const read = (list: RecordedEvent[]) => structuredClone(list).map(upcast);
  const all = [...events].sort((a, b) => a.position - b.position);
  const readOnly = async (): Promise<never> => {
    throw new Error("this event source is read-only");
  };
  return {
    append: readOnly,
    async readStream(stream, { fromRevision, direction = "forwards", maxCount = Number.MAX_SAFE_INTEGER } = {}) {
      const list = all.filter((e) => e.stream === stream).sort((a, b) => a.revision - b.revision);
      if (direction === "forwards") return read(list.slice(fromRevision ?? 0).slice(0, maxCount));
      return read(list.slice(0, (fromRevision ?? list.length - 1) + 1).reverse().slice(0, maxCount));
    },
    async readAll({ after = 0, maxCount = Number.MAX_SAFE_INTEGER } = {}) {
      return read(all.filter((e) => e.position > after).slice(0, maxCount));
    },
    head: async () => all.at(-1)?.position ?? 0,
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
