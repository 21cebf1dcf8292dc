// The cards the simulated processors keep on file (spec §2.3, §4.7, §4.8): saved from a payment's
// card, charged by payment_method_id, retrieved for their account's customer only.
import type { Card } from "../../../machines/events.js";
import { ProcessorRefused } from "../../errors.js";
import type { Ids } from "../../ids.js";
import type { ProcessorSide } from "../processor-side.js";
import type { PaymentView } from "../port.js";
import { DEFAULT_TEST_CARD, TEST_PAYMENT_METHODS } from "../test-cards.js";
import { cardFor } from "./scripted-outcomes.js";

/** A card the processor keeps on file. */
interface Vaulted {
  external_account_id: string;
  external_customer_id: string;
  number: string;
  card: Card;
}

/** Card on file needs an expiry of 03/30 or later (spec §4.8). */
export const canBeSavedOnFile = (card: Pick<Card, "exp_month" | "exp_year">) =>
  card.exp_year > 2030 || (card.exp_year === 2030 && Number(card.exp_month) >= 3);

export function createCardVault({ side, ids }: { side: ProcessorSide; ids: Ids }) {
  return {
    /** The test card number a stored-card charge charges: the card saved, a sandbox payment method, or the default. */
    numberCharged(payment: PaymentView): string {
      const stored = side.get<Vaulted>("vault", payment.intent.payment_method_id ?? "");
      return stored?.number ?? TEST_PAYMENT_METHODS[payment.intent.payment_method_id ?? ""] ?? DEFAULT_TEST_CARD;
    },

    /** Saves the payment's card (the one the processor read) for the customer; its new payment_method_id. */
    save(payment: PaymentView, external_customer_id: string): string {
      const card = payment.card;
      if (!card) throw new ProcessorRefused("the payment has no card to save", "no_card");
      if (!canBeSavedOnFile(card)) {
        throw new ProcessorRefused(`card expiring ${card.exp_month}/${card.exp_year} cannot be saved on file (03/30 or later needed)`, "card_not_savable");
      }
      const payment_method_id = ids.id("pm");
      const number = side.get<string>("cards", payment.intent.payment_id);
      if (!number) throw new ProcessorRefused("the processor did not read this payment's card", "no_card");
      side.set("vault", payment_method_id, { external_account_id: payment.intent.external_account_id, external_customer_id, number, card } satisfies Vaulted);
      return payment_method_id;
    },

    retrieve({ external_account_id, external_customer_id, payment_method_id }: { external_account_id: string; external_customer_id: string; payment_method_id: string }): Card | undefined {
      const stored = side.get<Vaulted>("vault", payment_method_id);
      // a vaulted card is its account's and customer's only
      if (stored) return stored.external_account_id === external_account_id && stored.external_customer_id === external_customer_id ? { ...stored.card, type: "card_not_present" } : undefined;
      const number = TEST_PAYMENT_METHODS[payment_method_id];
      return number ? cardFor(number, "card_not_present") : undefined;
    },
  };
}
