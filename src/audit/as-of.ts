// A payment as it stood at a moment: its stream folded up to the last event whose timestamp is
// at or before that moment (event time is the injected clock's, recorded in the metadata).
import { z } from "zod";
import { streams } from "../../machines/events.js";
import { foldStored, TransitionRefused, type PaymentState } from "../../machines/fold.js";
import { paymentRecord, type PaymentRecord } from "../present/payment-record.js";
import { InvalidRequest, NotFound } from "../errors.js";
import { recordRulesOf } from "../events/envelope.js";
import type { EventStore } from "../store/port.js";

export interface AsOf {
  record: PaymentRecord;
  state: PaymentState;
  /** The last event folded. */
  revision: number;
  event_id: string;
}

/**
 * A date-time with its offset (Z or ±hh:mm): a date that does not exist (Date.parse reads Nov 31 as
 * Dec 1) or a time without an offset (Date.parse reads it in the machine's time zone) is refused.
 */
const DATE_TIME = z.iso.datetime({ offset: true });

/** The record at `timestamp` (ISO 8601), or null when the payment did not exist yet. */
export async function asOf(store: EventStore, paymentId: string, timestamp: string): Promise<AsOf | null> {
  if (!DATE_TIME.safeParse(timestamp).success) throw new InvalidRequest(`timestamp: ${JSON.stringify(timestamp)} is not an ISO 8601 date-time of a real date with its offset, e.g. 2026-01-01T00:05:00Z or 2026-01-01T01:05:00+01:00`, "timestamp", "parameter_invalid");
  const at = Date.parse(timestamp);
  const events = await store.readStream(streams.payment(paymentId));
  if (events.length === 0) throw new NotFound("payment", paymentId, "payment_id", "in the store");
  let state: PaymentState | undefined;
  let last: (typeof events)[number] | undefined;
  for (const e of events) {
    if (Date.parse(e.metadata.timestamp) > at) break;
    try {
      state = foldStored(state, e).state;
    } catch (error) {
      if (!(error instanceof TransitionRefused)) throw error;
      throw new Error(`payment ${paymentId} has no record as of ${timestamp}: its stream holds an event the machine refuses (${error.message}); cardflow audit ${paymentId} explains it`);
    }
    last = e;
  }
  if (!state || !last) return null;
  // as it was shown then: by the record rules its last event was appended under
  return { record: paymentRecord(state, last.metadata.request_id, recordRulesOf(last)), state, revision: last.revision, event_id: last.id };
}
