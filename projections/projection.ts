// A projection is a pure fold of events into keyed documents. The runner (./runner.ts) feeds it
// from the store and commits documents with the checkpoint, so live and rebuilt results agree.
import type { RecordedEvent, TableShape } from "../src/store/port.js";

export interface Projection<Doc> {
  name: string;
  /**
   * Bumped whenever its documents or table change: the stored read model of another version is
   * dropped at start and folded again from the events (ReadModelStore.prepare). Default 1.
   */
  version?: number;
  /** Kept as a table with these columns and indexes (the lists' queries); absent: documents by key. */
  table?: TableShape<Doc>;
  /** The document this event changes, or null when the projection ignores it. */
  keyOf(event: RecordedEvent): string | null;
  apply(doc: Doc | undefined, event: RecordedEvent): Doc;
}

export function defineProjection<Doc>(projection: Projection<Doc>): Projection<Doc> {
  return projection;
}
