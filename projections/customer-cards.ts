// Read model: cards on file (spec §2.3) per customer, keyed `${account}/${external_customer_id}/${payment_method_id}`,
// so a customer's cards are found again by the external customer id (a key-prefix listing).
import type { PaymentEventOf } from "../machines/events.js";
import { defineProjection } from "./projection.js";

export interface CustomerCardRecord {
  payment_method_id: string;
  external_account_id: string;
  external_customer_id: string;
  brand: string;
  last_4: string;
  exp_month: string;
  exp_year: number;
  cardholder_name: string | null;
  funding: string;
  /** The payment whose card was saved. */
  payment_id: string;
  date_created: string;
}

export const customerCardKey = (accountId: string, customerId: string, paymentMethodId = "") =>
  `${accountId}/${customerId}/${paymentMethodId}`;

type Saved = PaymentEventOf<"CardSaved">["data"];

/**
 * A table, a row per card: a customer's cards by key prefix (account/customer/, the primary key's
 * range), and a card found by its token within the account (whose customer it is: a card is charged
 * for that customer only); the token's index ends with the key, so a lookup reads its row in the
 * order it asks for, without a sort. Named `customer_cards_v3`: `customer_cards` kept the cards as
 * documents (version 1), then as a table whose token index lacked the key (version 2); it is retired
 * (RETIRED_PROJECTIONS, ./registry.ts) and this one catches up from zero.
 */
export const customerCardsProjection = defineProjection<CustomerCardRecord>({
  name: "customer_cards_v3",
  table: {
    columns: { account: "text", customer_id: "text", payment_method_id: "text" },
    fixed: ["account", "customer_id", "payment_method_id"],
    indexes: [["account", "payment_method_id", "key"]],
    row: (card) => ({ account: card.external_account_id, customer_id: card.external_customer_id, payment_method_id: card.payment_method_id }),
  },
  keyOf: (e) => {
    if (e.type !== "CardSaved") return null;
    const d = e.data as Saved;
    return customerCardKey(d.external_account_id, d.external_customer_id, d.payment_method_id);
  },
  apply(_doc, e) {
    const { payment_method_id, external_account_id, external_customer_id, card } = e.data as Saved;
    return {
      payment_method_id,
      external_account_id,
      external_customer_id,
      brand: card.brand,
      last_4: card.last_4,
      exp_month: card.exp_month,
      exp_year: card.exp_year,
      cardholder_name: card.cardholder_name,
      funding: card.funding,
      payment_id: e.stream.slice("payment-".length),
      date_created: e.metadata.timestamp,
    };
  },
});
