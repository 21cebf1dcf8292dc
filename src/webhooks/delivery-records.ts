// Delivery state: one row per (endpoint, event), updated on each attempt (how many, the last
// answer, when the next one is due), kept in the read-model store beside the endpoint's cursor and
// written in the same commit (./delivery.ts): operational state, outside the event store, so a
// tenant's retries never grow the streams an auditor replays nor slow another tenant's reads.
// (Attempts were events on `webhook_deliveries-<endpoint>` streams before: those stay as they
// were, readable by the audit and the golden replays; nothing new is appended to them.)
import type { ReadModelStore } from "../store/port.js";

export const DELIVERIES = "webhook_deliveries";
/** Retries asked for through the API, per endpoint: the worker holding the endpoint picks them up. */
export const RETRIES = "webhook_delivery_retries";

export interface DeliveryRecord {
  /** The public event's id: a delivery is (endpoint, event). */
  id: string;
  object: "webhook_delivery";
  endpoint_id: string;
  external_account_id: string;
  event_type: string;
  payment_id: string | null;
  sequence: number;
  attempts: number;
  delivered: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  last_attempt_at: string;
  next_attempt_at: string | null;
}

/** The row of a delivery after an attempt. */
export function deliveryRow(
  endpointId: string,
  event: { id: string; external_account_id: string; type: string; payment_id: string | null; sequence: number },
  attempt: Pick<DeliveryRecord, "attempts" | "delivered" | "status_code" | "error" | "duration_ms" | "last_attempt_at" | "next_attempt_at">,
): DeliveryRecord {
  const { id, external_account_id, type, payment_id, sequence } = event;
  return { id, object: "webhook_delivery", endpoint_id: endpointId, external_account_id, event_type: type, payment_id, sequence, ...attempt };
}

/** A retry asked through the API; `reenabled`: the endpoint was failing and is enabled again by it. */
export interface RetryAsked {
  event_id: string;
  at: number;
  reenabled?: boolean;
}

export const deliveryKey = (endpointId: string, eventId: string) => `${endpointId}/${eventId}`;
/** The same row again under its payment, for the audit of one payment. */
export const paymentDeliveryKey = (paymentId: string, endpointId: string, eventId: string) => `pay/${paymentId}/${endpointId}/${eventId}`;

/** The documents a row is written as (by endpoint, and by payment when it has one). */
export const rowDocs = (row: DeliveryRecord) => [
  { key: deliveryKey(row.endpoint_id, row.id), doc: row },
  ...(row.payment_id ? [{ key: paymentDeliveryKey(row.payment_id, row.endpoint_id, row.id), doc: row }] : []),
];

export function deliveryRecords(readModels: ReadModelStore) {
  return {
    get: (endpointId: string, eventId: string) => readModels.get<DeliveryRecord>(DELIVERIES, deliveryKey(endpointId, eventId)),
    /** The endpoint's deliveries after `after` (an event id), in event-id order, at most `limit`. */
    list: (endpointId: string, limit = 100) => readModels.list<DeliveryRecord>(DELIVERIES, `${endpointId}/`, { limit }),
    /** Every delivery of one payment's events (the audit). */
    ofPayment: (paymentId: string) => readModels.list<DeliveryRecord>(DELIVERIES, `pay/${paymentId}/`),
    /** Asks the endpoint's worker (in any process) to try this event again now. */
    askRetry: (endpointId: string, asked: RetryAsked) => readModels.commitBatch([{ projection: RETRIES, docs: [{ key: endpointId, doc: asked }], checkpoint: 0 }]),
    retryAsked: (endpointId: string) => readModels.get<RetryAsked>(RETRIES, endpointId),
  };
}

