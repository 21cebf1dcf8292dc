// A projection is a pure fold of events into keyed documents. The runner (./runner.ts) feeds it
// from the store and commits documents with the checkpoint, so live and rebuilt results agree.
import type { ReadModelShape, RecordedEvent, TableShape } from "../src/store/port.js";

export interface Projection<Doc> {
  name: string;
  /**
   * Bumped whenever its documents or table change: the stored read model of another version is
   * dropped at start and folded again from the events (ReadModelStore.prepare). Default 1.
   *
   * In place, so only for a read model no process of another release folds. cardflow's own read
   * models are folded by the processes of two releases at once during a rolling upgrade
   * (docs/OPERATIONS.md): under one name each would fold its own shape into the other's rows and
   * move the checkpoint they share past events the other never folds. So a released read model
   * never changes under its name: a change takes a new name (`<name>_v<n>`) and retires the old
   * one (./registry.ts), each release folding its own. projections/read-model-shapes.json holds
   * each name's stored form (its version, its table's columns and indexes), and a test fails when
   * one changes in place; a change of the documents' fields alone is the fold's code, which no
   * record catches: it takes a new name all the same.
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

/** How the projection's read model is stored (what ReadModelStore.prepare makes ready). */
export const readModelShape = (projection: Projection<unknown>): ReadModelShape => ({ version: projection.version ?? 1, ...(projection.table && { table: projection.table }) });
