// Reading events back: one stream by revision, or every stream in global order.
import type { RecordedEvent } from "./events.js";

export interface ReadStreamOptions {
  /** First revision to read (inclusive). Forwards default 0; backwards default the end. */
  fromRevision?: number;
  direction?: "forwards" | "backwards";
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Read events whose position is strictly greater than this checkpoint. Default 0 (everything). */
  after?: number;
  maxCount?: number;
}

export interface StreamReader {
  /** Events of one stream; an empty array when the stream does not exist. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /**
   * Optional, for stores that answer it without a round trip: a value that changes whenever an
   * append may have committed (through this object, another connection or another process); with
   * a stream, whenever an append to that stream may have (appends to others may leave it). Taken
   * before a read, the same value later proves nothing was appended since that read, so a state
   * folded from it is still current (the engine's status read: src/engine/payment-streams.ts).
   */
  changeMark?(stream?: string): number | string;
}

export interface AllReader {
  /** Events of every stream in global position order. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /**
   * The position of the last event committed (0 when none): every append acknowledged before the
   * call, in any process, is at or below it. A read that must reflect those appends waits until
   * the read models have passed it (projections/runner.ts, waitFor).
   */
  head(): Promise<number>;
}
