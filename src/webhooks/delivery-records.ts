// Delivery state: one row per (endpoint, event), updated on each attempt (how many, the last
// answer, when the next one is due), in a table of its own (`rm_webhook_deliveries` in SQLite and
// PostgreSQL, a map in memory: src/store/port/tables.ts), indexed by endpoint (the deliveries
// route, the retry's lookup by key) and by payment (the audit), and written in the same commit as
// the endpoint's cursor (./delivery.ts): operational state, outside the event store, so a tenant's
// retries never grow the streams an auditor replays nor slow another tenant's reads.
// (Attempts were events on `webhook_deliveries-<endpoint>` streams before: those stay as they
// were, readable by the audit and the golden replays; nothing new is appended to them.)
import { NotFound } from "../errors.js";
import { prepareOnce, type ReadModelShape, type ReadModelStore } from "../store/port.js";

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

/** The row's table: a row per delivery (its key: endpoint/event), indexed by endpoint and by payment. */
export const DELIVERIES_SHAPE: ReadModelShape = {
  version: 2,
  table: {
    columns: { endpoint_id: "text", payment_id: "text" },
    fixed: ["endpoint_id", "payment_id"],
    indexes: [
      ["endpoint_id", "key"],
      ["payment_id", "key"],
    ],
    row: (row: DeliveryRecord) => ({ endpoint_id: row.endpoint_id, payment_id: row.payment_id }),
  },
};

/** The document a row is written as. */
export const rowDocs = (row: DeliveryRecord) => [{ key: deliveryKey(row.endpoint_id, row.id), doc: row }];

/** The table made on each store handle once, before its first read or write (a failure is tried again). */
export const prepareDeliveries = prepareOnce(DELIVERIES, DELIVERIES_SHAPE);

export function deliveryRecords(readModels: ReadModelStore) {
  const ready = () => prepareDeliveries(readModels);
  const byIndex = async (where: Record<string, string>, limit: number) => (await ready(), readModels.query<DeliveryRecord>(DELIVERIES, { where, order: ["key"], direction: "asc", limit }));
  return {
    get: async (endpointId: string, eventId: string) => (await ready(), readModels.get<DeliveryRecord>(DELIVERIES, deliveryKey(endpointId, eventId))),
    /**
     * A page of the endpoint's deliveries, newest first (event ids are time-ordered), after the
     * delivery `startingAfter` names (404 when the endpoint has none by that id): `limit` rows read by its index, plus one that says whether more follow.
     */
    async page(endpointId: string, { limit, startingAfter }: { limit: number; startingAfter?: string | undefined }): Promise<{ data: DeliveryRecord[]; has_more: boolean }> {
      await ready();
      // a stale or mistyped id would otherwise page from wherever it sorts (the first page, again and again)
      if (startingAfter !== undefined && !(await readModels.get(DELIVERIES, deliveryKey(endpointId, startingAfter)))) {
        throw new NotFound("delivery", startingAfter, "starting_after", "of this endpoint");
      }
      const rows = await readModels.query<DeliveryRecord>(DELIVERIES, { where: { endpoint_id: endpointId }, order: ["key"], direction: "desc", ...(startingAfter !== undefined && { after: [deliveryKey(endpointId, startingAfter)] }), limit: limit + 1 });
      return { data: rows.slice(0, limit), has_more: rows.length > limit };
    },
    /** Every delivery of one payment's events (the audit; its index). */
    ofPayment: (paymentId: string, limit = 1_000) => byIndex({ payment_id: paymentId }, limit),
    /** Asks the endpoint's worker (in any process) to try this event again now. */
    askRetry: (endpointId: string, asked: RetryAsked) => readModels.commitBatch([{ projection: RETRIES, docs: [{ key: endpointId, doc: asked }], checkpoint: 0 }]),
    retryAsked: (endpointId: string) => readModels.get<RetryAsked>(RETRIES, endpointId),
  };
}

