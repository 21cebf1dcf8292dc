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
  /** Filled by the engine for tamper evidence (hash chain); adapters store it verbatim. */
  [key: string]: unknown;
}

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
