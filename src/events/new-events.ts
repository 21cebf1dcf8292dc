// New events as the write path appends them: enveloped (an id, the command's metadata) and linked
// into their stream's hash chain. Every writer (the engine's streams, webhook endpoints) uses it.
import { chainEvents } from "./chain.js";
import type { EventData, EventMetadata } from "./envelope.js";

/** A domain event before it is enveloped. */
export interface DomainEventLike {
  type: string;
  version: number;
  data: unknown;
}

/**
 * Events ready to append to `stream` after the event whose hash is `prevHash` (null: a new
 * stream): each with a new id and its own copy of the metadata, linked into the hash chain.
 */
export function newEvents(stream: string, prevHash: string | null, events: readonly DomainEventLike[], metadata: EventMetadata, newId: () => string): EventData[] {
  return chainEvents(stream, prevHash, events.map((e) => ({ id: newId(), type: e.type, version: e.version, data: e.data, metadata: { ...metadata } })));
}
