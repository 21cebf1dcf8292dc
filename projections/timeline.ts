// Read model: the audit timeline of each payment — every event with its time, request, actor,
// the status before and after, and the amounts after; and, in a document of its own
// (`<payment_id>/deliveries`), every attempt to deliver the payment's public events to a webhook
// endpoint (src/webhooks/). Deliveries live on the endpoints' streams, not the payment's, so the
// payment's own document stays what a replay of its stream alone gives.
import type { z } from "zod";
import type { WebhookDeliveryAttempted } from "../machines/events.js";
import type { PaymentState } from "../machines/fold.js";
import { defineProjection } from "./projection.js";
import { foldShared } from "./shared-fold.js";

export interface TimelineEntry {
  position: number;
  revision: number;
  event_id: string;
  type: string;
  timestamp: string;
  request_id: number;
  actor: string | null;
  status_before: string;
  status_after: string;
  amounts_after: { authorized: string; captured: string; refunded: string };
}

export interface TimelineDoc {
  payment_id: string;
  state: PaymentState;
  entries: TimelineEntry[];
}

/** One attempt to deliver one of the payment's public events. */
export type DeliveryEntry = Omit<z.infer<typeof WebhookDeliveryAttempted>["data"], "payment_id"> & { position: number; timestamp: string };

export interface DeliveriesDoc {
  payment_id: string;
  deliveries: DeliveryEntry[];
}

export const deliveriesKey = (paymentId: string) => `${paymentId}/deliveries`;

type Attempted = z.infer<typeof WebhookDeliveryAttempted>["data"];

export const timelineProjection = defineProjection<TimelineDoc | DeliveriesDoc>({
  name: "timeline",
  keyOf(e) {
    if (e.stream.startsWith("payment-")) return e.stream.slice("payment-".length);
    const paymentId = e.type === "WebhookDeliveryAttempted" ? (e.data as Attempted).payment_id : null;
    return paymentId === null ? null : deliveriesKey(paymentId);
  },
  apply(doc, e) {
    if (e.type === "WebhookDeliveryAttempted") {
      const { payment_id, ...attempt } = e.data as Attempted;
      const deliveries = (doc as DeliveriesDoc | undefined)?.deliveries ?? [];
      return { payment_id: payment_id!, deliveries: [...deliveries, { ...attempt, position: e.position, timestamp: e.metadata.timestamp }] };
    }
    const timeline = doc as TimelineDoc | undefined;
    const { before, state } = foldShared(timeline?.state, e);
    const entry: TimelineEntry = {
      position: e.position,
      revision: e.revision,
      event_id: e.id,
      type: e.type,
      timestamp: e.metadata.timestamp,
      request_id: e.metadata.request_id,
      actor: e.metadata.actor ?? null,
      status_before: before,
      status_after: state.status,
      amounts_after: { authorized: state.context.amount_authorized, captured: state.context.amount_captured, refunded: state.context.amount_refunded },
    };
    return { payment_id: e.stream.slice("payment-".length), state, entries: [...(timeline?.entries ?? []), entry] };
  },
});
