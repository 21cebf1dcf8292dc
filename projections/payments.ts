// Read model: the payment record (spec §2.1) per payment, with the machine state it came from.
import type { PaymentState } from "../machines/fold.js";
import { paymentRecord, type PaymentRecord } from "./payment-record.js";
import { defineProjection } from "./projection.js";
import { foldShared } from "./shared-fold.js";

export interface PaymentDoc {
  state: PaymentState;
  record: PaymentRecord;
}

export const paymentsProjection = defineProjection<PaymentDoc>({
  name: "payments",
  keyOf: (e) => (e.stream.startsWith("payment-") ? e.stream.slice("payment-".length) : null),
  apply(doc, e) {
    const { state } = foldShared(doc?.state, e);
    const requestId = e.metadata.request_id;
    // Presented when first read (the store serializing the document): a batch folds several events
    // of a payment and writes only its last document, so the records in between are never built.
    let record: PaymentRecord | undefined;
    return {
      state,
      get record() {
        return (record ??= paymentRecord(state, requestId));
      },
    };
  },
});
