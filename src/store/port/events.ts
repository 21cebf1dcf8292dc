// Events as the engine hands them to a store and as a store returns them: the envelope of
// src/events/envelope.ts (the floor below the stores, where the write path builds them).
export type { EventData, EventMetadata, RecordedEvent } from "../../events/envelope.js";

/**
 * A stored event whose data or metadata is not JSON (edited in the database): reading it fails with
 * the event named, so the one bad row can be found; audits report it and read on past it.
 */
export class UnreadableEvent extends Error {
  override readonly name = "UnreadableEvent";
  constructor(readonly event: { stream: string; revision: number; position: number; id: string }, field: "data" | "metadata", cause: unknown) {
    super(`event ${event.id} (stream ${event.stream}, revision ${event.revision}, position ${event.position}) cannot be read: its ${field} is not JSON (${(cause as Error).message})`, { cause });
  }
}
