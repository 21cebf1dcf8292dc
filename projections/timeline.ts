// Read model: the audit timeline of each payment — every event with its time, request, actor,
// the status before and after, and the amounts after.
import { foldStored, type PaymentState } from "../machines/fold.js";
import { defineProjection } from "./projection.js";

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

export const timelineProjection = defineProjection<TimelineDoc>({
  name: "timeline",
  keyOf: (e) => (e.stream.startsWith("payment-") ? e.stream.slice("payment-".length) : null),
  apply(doc, e) {
    const { before, state } = foldStored(doc?.state, e);
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
    return { payment_id: e.stream.slice("payment-".length), state, entries: [...(doc?.entries ?? []), entry] };
  },
});
