// Seeded defects: test-only switches that break one guarantee on purpose, so the chaos run's
// history checker (scripts/chaos) can prove it catches each (its negative controls). Read only in
// sandbox mode, from CARDFLOW_SEEDED_DEFECT; production (SANDBOX=off) never reads it. Each is a
// decorator of the event-store port, at the edge: the engine is not touched.
import type { AppendResult, EventStore } from "./store/port.js";

export const SEEDED_DEFECTS = {
  /** Appends to payment streams ignore the expected revision: concurrent commands may both append. */
  "skip-expected-revision": (store: EventStore): EventStore => ({
    ...store,
    append: (stream, events, options) => store.append(stream, events, stream.startsWith("payment-") ? { ...options, expectedRevision: "any" } : options),
  }),
  /** Idempotency-Keys are not claimed nor kept: a retry with the same key runs again. */
  "forget-idempotency-keys": (store: EventStore): EventStore => ({
    ...store,
    append: (stream, events, { idempotency: _forgotten, ...options }) => store.append(stream, events, options),
    claimIdempotency: async () => undefined,
    saveIdempotency: async () => true,
    releaseIdempotency: async () => undefined,
    readIdempotency: async () => undefined,
  }),
  /** A payment append is answered at once and written 300 ms later, its failure unseen. */
  "ack-before-append": (store: EventStore): EventStore => ({
    ...store,
    async append(stream, events, options): Promise<AppendResult> {
      if (!stream.startsWith("payment-")) return store.append(stream, events, options);
      setTimeout(() => void store.append(stream, events, options).catch(() => undefined), 300);
      const before = typeof options.expectedRevision === "number" ? options.expectedRevision : -1;
      return { nextRevision: before + events.length, position: 0 };
    },
  }),
} as const satisfies Record<string, (store: EventStore) => EventStore>;

export type SeededDefect = keyof typeof SEEDED_DEFECTS;

/** The stores with the seeded defect named by CARDFLOW_SEEDED_DEFECT applied (sandbox only; said on stderr). */
export function withSeededDefect<S extends { store: EventStore }>(stores: S, { sandbox }: { sandbox: boolean }, env: NodeJS.ProcessEnv = process.env): S {
  if (!sandbox || !env.CARDFLOW_SEEDED_DEFECT) return stores;
  const name = env.CARDFLOW_SEEDED_DEFECT;
  if (!(name in SEEDED_DEFECTS)) throw new Error(`CARDFLOW_SEEDED_DEFECT: expected one of ${Object.keys(SEEDED_DEFECTS).join(", ")}, got ${JSON.stringify(name)}`);
  process.stderr.write(`cardflow: seeded defect ${name} is on (a sandbox test switch: this process breaks a guarantee on purpose)\n`);
  return { ...stores, store: SEEDED_DEFECTS[name as SeededDefect](stores.store) };
}
