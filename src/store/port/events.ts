// Events as the engine hands them to a store and as a store returns them: the envelope of
// src/events/envelope.ts (the floor below the stores, where the write path builds them).
export type { EventData, EventMetadata, RecordedEvent } from "../../events/envelope.js";
