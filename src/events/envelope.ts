// The envelope of an event: the domain event (type, version, data) with its id and metadata, as
// the writer hands it to the store (EventData) and the store returns it (RecordedEvent). New events
// are enveloped by ./new-events.ts.
/** Correlation data recorded with every event (DESIGN.md: "Events are the system of record"). */
export interface EventMetadata {
  /** When the fact happened, from the injected clock (ISO 8601 with offset). Never the store's clock. */
  timestamp: string;
  /** The API request that caused the event (integer, unique per request). */
  request_id: number;
  idempotency_key?: string | null;
  /** Who acted: an API key id, a terminal, a processor, the library caller. */
  actor?: string | null;
  /** The payment record's presentation rules in force when the event was appended (RECORD_RULES; none: 1). */
  record_rules?: number;
  /** Filled by the engine for tamper evidence (hash chain); adapters store it verbatim. */
  [key: string]: unknown;
}

/**
 * The revision of the rules that present a payment record (src/present/payment-record.ts), stamped
 * on every event appended: a public event (webhook, feed) or an as-of record shows the record by
 * the rules of its event's time, so what was once published never changes after an upgrade.
 * 2: a capture requested counts in amount_captured (spec §3); events without it were appended under 1.
 */
export const RECORD_RULES = 2;

/** The record rules an event was appended under. */
export const recordRulesOf = (e: { metadata: EventMetadata }): number => (typeof e.metadata.record_rules === "number" ? e.metadata.record_rules : 1);

/** An event as the engine hands it to the store. `id` is a UUID and the idempotency key of the append. */
export interface EventData {
  id: string;
  type: string;
  version: number;
  data: unknown;
  metadata: EventMetadata;
}

/** An event as the store returns it. */
export interface RecordedEvent extends EventData {
  stream: string;
  /** Position inside its stream, from 0. */
  revision: number;
  /** Position in the whole store, from 1, strictly increasing in commit order. */
  position: number;
}
