// Appending to a stream with an expected revision (optimistic concurrency).
import type { EventData } from "./events.js";
import type { IdempotencyRecord } from "./idempotency.js";

/**
 * - a number: the stream's current last revision must be exactly this;
 * - "no_stream": the stream must not exist;
 * - "stream_exists": the stream must exist;
 * - "any": no check.
 */
export type ExpectedRevision = number | "no_stream" | "stream_exists" | "any";

export interface AppendOptions {
  expectedRevision: ExpectedRevision;
  /**
   * Replaces the Idempotency-Key record of the same key and token in the same transaction as the
   * events. When the key is no longer claimed by this token, throws IdempotencyClaimLost and
   * appends nothing.
   */
  idempotency?: IdempotencyRecord;
}

export interface AppendResult {
  /** Revision of the last event of the stream after the append. */
  nextRevision: number;
  /** Global position of the last appended event. */
  position: number;
  /**
   * The stream's change mark (./read.ts changeMark) as of this append's commit, from stores that
   * have one: equal to changeMark(stream) until anything else is appended to the stream, so the
   * state the append left is known current without a read. Absent for an append that wrote nothing.
   */
  mark?: number | string;
}

export interface Appender {
  /**
   * Appends atomically. Throws WrongExpectedRevision when the check fails and appends nothing.
   * Idempotent by event id: appending events whose ids are already stored in this stream
   * (a retried append) stores nothing new and returns the original result.
   */
  append(stream: string, events: EventData[], options: AppendOptions): Promise<AppendResult>;
}

export class WrongExpectedRevision extends Error {
  override readonly name = "WrongExpectedRevision";
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    /** The stream's last revision, or -1 when it does not exist. */
    readonly actual: number,
  ) {
    super(`stream ${stream}: expected revision ${String(expected)}, actual ${actual}`);
  }
}

/** The check the in-process adapters apply (PostgreSQL's is expected_revision_holds(), in SQL); `actual` is -1 for a stream that does not exist. */
export function checkExpectedRevision(stream: string, expected: ExpectedRevision, actual: number): void {
  const ok =
    expected === "any" ||
    (expected === "no_stream" && actual === -1) ||
    (expected === "stream_exists" && actual >= 0) ||
    expected === actual;
  if (!ok) throw new WrongExpectedRevision(stream, expected, actual);
}
