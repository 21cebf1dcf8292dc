// The store port: what every adapter (memory, SQLite, PostgreSQL, KurrentDB) implements, shaped
// after EventStoreDB/KurrentDB semantics so that adapter stays thin: per-stream revisions from 0, a
// global position from 1, expected-revision checks, idempotent append by event id, ordered reads
// and catch-up subscriptions from a checkpoint. Callers take the small interface they use
// (./port/*: an Appender, a StreamReader, a Subscriber...); adapters implement the composed EventStore.
import type { Appender } from "./port/append.js";
import type { IdempotencyStore } from "./port/idempotency.js";
import type { IdSequences } from "./port/ids.js";
import type { AllReader, StreamReader } from "./port/read.js";
import type { Subscriber } from "./port/subscribe.js";

export * from "./port/append.js";
export * from "./port/events.js";
export * from "./port/idempotency.js";
export * from "./port/ids.js";
export * from "./port/missing.js";
export * from "./port/prepare-once.js";
export * from "./port/read.js";
export * from "./port/read-models.js";
export * from "./port/subscribe.js";
export * from "./port/tables.js";
export * from "./port/unavailable.js";

/** Everything an event store adapter provides, on one handle. */
export interface EventStore extends Appender, StreamReader, AllReader, Subscriber, IdempotencyStore, IdSequences {
  close(): Promise<void>;
}
