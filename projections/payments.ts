// Read model: per payment, the machine's state and the request id of its last event: everything
// its record (spec §2.1) is presented from. The record itself is not stored: it is the state
// written out again (~1 KB more per payment), so it is presented when read (recordOf,
// src/present/payment-record.ts), by the very code that presents the engine's answers. Named
// `payment_states_v4`: the `payments` read model of earlier versions held the record beside the
// state, and `payment_states` kept these documents (version 1), then a table with other indexes
// (version 2); `payment_states_v3` kept the reference fixed at creation, which an authorization
// may now change (TransactionReferenceGiven, spec §4.4): all are retired (RETIRED_PROJECTIONS,
// ./registry.ts) and this one catches up from zero. A released read model never changes under its
// name (./projection.ts).
import { foldStored, type PaymentState } from "../machines/fold.js";
import { defineProjection } from "./projection.js";

export interface PaymentDoc {
  state: PaymentState;
  /** The request that appended the payment's last event (the record's `request_id`). */
  request_id: number;
}

/**
 * A table, a row per payment: the account's payments newest first (created time, then id), through
 * an index per filter the lists offer (status, capture method, terminal, customer); and the search
 * (`q`, ./payment-list.ts) by the start of a payment id or of a reference, through (account, key)
 * and (account, reference, key): a prefix is a range of those, read in id or reference order.
 */
export const paymentsProjection = defineProjection<PaymentDoc>({
  name: "payment_states_v4",
  table: {
    columns: { account: "text", created: "text", status: "text", capture_method: "text", terminal_id: "text", customer_id: "text", reference: "text" },
    fixed: ["account", "created", "capture_method"],
    indexes: [
      ["account", "created", "key"],
      ["account", "status", "created", "key"],
      ["account", "capture_method", "created", "key"],
      ["account", "terminal_id", "created", "key"],
      ["account", "customer_id", "created", "key"],
      ["account", "key"],
      ["account", "reference", "key"],
    ],
    row({ state }) {
      const intent = state.context.intent!;
      return {
        account: intent.external_account_id,
        created: intent.date_created,
        status: state.status,
        capture_method: intent.capture_method,
        terminal_id: state.context.terminal?.terminal_id ?? null,
        // the record's customer: the one the card was saved for, else the intent's
        customer_id: state.context.saved_card?.external_customer_id ?? intent.external_customer_id,
        reference: intent.external_transaction_id === null ? null : String(intent.external_transaction_id),
      };
    },
  },
  keyOf: (e) => (e.stream.startsWith("payment-") ? e.stream.slice("payment-".length) : null),
  apply: (doc, e) => ({ state: foldStored(doc?.state, e).state, request_id: e.metadata.request_id }),
});
