// The in-memory event log: append (expected revision, idempotent by event id), reads and catch-up
// subscriptions. One process; each append runs synchronously inside, so it is atomic.
import { upcast } from "../../../machines/event-versions.js";
import { checkExpectedRevision, type Appender, type AppendOptions, type AppendResult } from "../port/append.js";
import type { EventData } from "../port/events.js";
import type { RecordedEvent } from "../port/events.js";
import type { AllReader, ReadAllOptions, ReadStreamOptions, StreamReader } from "../port/read.js";
import type { Subscriber } from "../port/subscribe.js";
import { createPump } from "../pump.js";

export interface MemoryLog extends Appender, StreamReader, AllReader, Subscriber {
  close(): Promise<void>;
}

/** `claim(record)` replaces the append's Idempotency-Key claim, checked before anything is appended (throws when lost). */
export function createMemoryLog(claim: (options: AppendOptions) => void): MemoryLog {
  const all: RecordedEvent[] = [];
  const streams = new Map<string, RecordedEvent[]>();
  const byId = new Map<string, RecordedEvent>();
  const pump = createPump(async (after, maxCount) => readAllSync({ after, maxCount }).map(upcast));

  function readAllSync({ after = 0, maxCount = Number.MAX_SAFE_INTEGER }: ReadAllOptions = {}): RecordedEvent[] {
    // positions are 1..n and all[i].position === i + 1
    return all.slice(after, after + maxCount);
  }

  return {
    // one process, every append goes through here: the global order's length is the mark
    changeMark: () => all.length,
    async append(stream: string, events: EventData[], options: AppendOptions): Promise<AppendResult> {
      const existing = streams.get(stream) ?? [];
      const first = events[0];
      const repeat = first && byId.get(first.id);
      if (repeat && repeat.stream === stream) {
        const last = byId.get(events[events.length - 1]!.id) ?? repeat;
        return { nextRevision: last.revision, position: last.position };
      }
      checkExpectedRevision(stream, options.expectedRevision, existing.length - 1);
      claim(options);
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

    async head() {
      return all.length;
    },

    subscribeToAll(options, onEvent) {
      return pump.subscribe(options, onEvent);
    },

    async close() {
      await pump.closeAll();
    },
  };
}

/** A copy as read: upcast to its type's current schema version (machines/event-versions.ts). */
const clone = (e: RecordedEvent): RecordedEvent => upcast(structuredClone(e));
