// In-memory store: the reference adapter of the port, for tests and for embedding without
// persistence (single process).
import type { EventStore } from "../port.js";
import { createMemoryLog } from "./events.js";
import { createMemoryIdempotency } from "./idempotency.js";
import { createMemorySequences } from "./ids.js";

export { createMemoryReadModels } from "./read-models.js";

export function createMemoryStore(): EventStore {
  const idempotency = createMemoryIdempotency();
  // the append's record replaces its claim, checked before anything is appended
  const log = createMemoryLog(({ idempotency: record }) => record && idempotency.replaceClaim(record));
  const { replaceClaim: _, ...records } = idempotency;
  return { ...log, ...records, ...createMemorySequences() };
}
