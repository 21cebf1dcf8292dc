// Read model: per payment, the machine's state and the request id of its last event: everything
// its record (spec §2.1) is presented from. The record itself is not stored: it is the state
// written out again (~1 KB more per payment), so it is presented when read (recordOf,
// src/present/payment-record.ts), by the very code that presents the engine's answers. Named `payment_states`: the `payments` read model
// of earlier versions held the record beside the state, documents of another shape; it is retired
// (RETIRED_PROJECTIONS, ./registry.ts) and this one catches up from zero.
import { foldStored, type PaymentState } from "../machines/fold.js";
import { defineProjection } from "./projection.js";

export interface PaymentDoc {
  state: PaymentState;
  /** The request that appended the payment's last event (the record's `request_id`). */
  request_id: number;
}

export const paymentsProjection = defineProjection<PaymentDoc>({
  name: "payment_states",
  keyOf: (e) => (e.stream.startsWith("payment-") ? e.stream.slice("payment-".length) : null),
  apply: (doc, e) => ({ state: foldStored(doc?.state, e).state, request_id: e.metadata.request_id }),
});
