// Read model: per payment, every attempt to deliver its public events to a webhook endpoint
// (src/webhooks/). Attempts are events of the endpoints' deliveries streams, so no single stream
// gives a payment's deliveries: this document does. A payment's own history needs no read model:
// it IS its stream (the audit timeline, src/audit/audit.ts, folds it).
//
// Until this projection existed the `timeline` projection held these documents (keyed
// `<payment_id>/deliveries`) beside a copy of every payment's stream; its rows are retired
// (RETIRED_PROJECTIONS, ./registry.ts) and this one catches up from zero.
import type { z } from "zod";
import type { WebhookDeliveryAttempted } from "../machines/events.js";
import { defineProjection } from "./projection.js";

type Attempted = z.infer<typeof WebhookDeliveryAttempted>["data"];

/** One attempt to deliver one of the payment's public events. */
export type DeliveryEntry = Omit<Attempted, "payment_id"> & { position: number; timestamp: string };

export interface DeliveriesDoc {
  payment_id: string;
  deliveries: DeliveryEntry[];
}

export const paymentDeliveriesProjection = defineProjection<DeliveriesDoc>({
  name: "payment_deliveries",
  keyOf: (e) => (e.type === "WebhookDeliveryAttempted" ? (e.data as Attempted).payment_id ?? null : null),
  apply(doc, e) {
    const { payment_id, ...attempt } = e.data as Attempted;
    return { payment_id: payment_id!, deliveries: [...(doc?.deliveries ?? []), { ...attempt, position: e.position, timestamp: e.metadata.timestamp }] };
  },
});
