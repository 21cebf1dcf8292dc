// In-memory event store: the reference adapter of the port, for tests and for embedding
// without persistence. Single process; appends are synchronous inside, so they are atomic.
import {
  checkExpectedRevision,
  type AppendOptions,
  type AppendResult,
  type EventData,
  holdsKey,
  IdempotencyClaimLost,
  type EventStore,
  type IdempotencyRecord,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from "./port.js";
import { createPump } from "./pump.js";

export function createMemoryStore(): EventStore {
  const all: RecordedEvent[] = [];
  const streams = new Map<string, RecordedEvent[]>();
  const byId = new Map<string, RecordedEvent>();
  const idempotency = new Map<string, IdempotencyRecord>();
  const sequences = new Map<string, number>();
  const pump = createPump(async (after, maxCount) => readAllSync({ after, maxCount }));

  function readAllSync({ after = 0, maxCount = Number.MAX_SAFE_INTEGER }: ReadAllOptions = {}): RecordedEvent[] {
    // positions are 1..n and all[i].position === i + 1
    return all.slice(after, after + maxCount);
  }

  /** Replaces the record of the same key and token; false when the key is no longer this token's. */
  function saveIdempotency(record: IdempotencyRecord): boolean {
    if (idempotency.get(record.key)?.token !== record.token) return false;
    idempotency.set(record.key, structuredClone(record));
    return true;
  }

  return {
    // one process, every append goes through here: the global order's length is the mark
    changeMark: () => all.length,
    async append(stream: string, events: EventData[], { expectedRevision, idempotency: record }: AppendOptions): Promise<AppendResult> {
      const existing = streams.get(stream) ?? [];
      const first = events[0];
      const repeat = first && byId.get(first.id);
      if (repeat && repeat.stream === stream) {
        const last = byId.get(events[events.length - 1]!.id) ?? repeat;
        return { nextRevision: last.revision, position: last.position };
      }
      checkExpectedRevision(stream, expectedRevision, existing.length - 1);
      // the append's record replaces its claim, checked before anything is appended
      if (record && !saveIdempotency(record)) throw new IdempotencyClaimLost(record.key);
      if (events.length === 0) return { nextRevision: existing.length - 1, position: all.length };
      const recorded = events.map((e, i): RecordedEvent => ({
        ...structuredClone(e),
        stream,
        revision: existing.length + i,
        position: all.length + i + 1,
      }));
      for (const r of recorded) {
        all.push(r);
        byId.set(r.id, r);
      }
      streams.set(stream, existing.concat(recorded));
      pump.notify();
      const last = recorded[recorded.length - 1]!;
      return { nextRevision: last.revision, position: last.position };
    },

    async readStream(stream: string, { fromRevision, direction = "forwards", maxCount = Number.MAX_SAFE_INTEGER }: ReadStreamOptions = {}) {
      const events = streams.get(stream) ?? [];
      if (direction === "forwards") return events.slice(fromRevision ?? 0).slice(0, maxCount).map(clone);
      const from = fromRevision ?? events.length - 1;
      return events.slice(0, from + 1).reverse().slice(0, maxCount).map(clone);
    },

    async readAll(options?: ReadAllOptions) {
      return readAllSync(options).map(clone);
    },

    subscribeToAll(options: SubscribeOptions, onEvent): Subscription {
      return pump.subscribe(options, onEvent);
    },

    async claimIdempotency(claim, now) {
      const held = idempotency.get(claim.key);
      if (held && holdsKey(held, now)) return structuredClone(held);
      idempotency.set(claim.key, structuredClone(claim));
      return undefined;
    },
    async saveIdempotency(record) {
      return saveIdempotency(record);
    },
    async releaseIdempotency(key, token, expires_at) {
      const held = idempotency.get(key);
      if (held?.token !== token || held.state !== "in_flight") return;
      if (held.status === 0) idempotency.delete(key);
      else idempotency.set(key, { ...held, state: "done", expires_at });
    },
    async readIdempotency(key) {
      const r = idempotency.get(key);
      return r && structuredClone(r);
    },
    async reserveIds(sequence, count) {
      const first = sequences.get(sequence) ?? 1;
      sequences.set(sequence, first + count);
      return first;
    },
    async purgeIdempotency(now) {
      let n = 0;
      for (const [k, r] of idempotency) if (!holdsKey(r, now) && idempotency.delete(k)) n++;
      return n;
    },

    async close() {
      await pump.closeAll();
    },
  };
}

const clone = (e: RecordedEvent): RecordedEvent => structuredClone(e);
