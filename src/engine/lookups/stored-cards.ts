// Cards on file, as a stored-card charge finds them: the customer_cards read model, else the
// processor's vault (a sandbox test token). Cards on file are never changed nor removed once saved:
// one found is kept (bounded), so charging a card on file costs no read-model round trip after the
// first.
import type { Card } from "../../../machines/events.js";
import { customerCardKey, customerCardsProjection, type CustomerCardRecord } from "../../../projections/customer-cards.js";
import type { ProjectionRunner } from "../../../projections/runner.js";
import { setBounded } from "../../bounded.js";
import type { Processors } from "../../processors/port.js";
import type { ReadModelStore } from "../../store/port.js";
import type { Account } from "./accounts.js";

export function createStoredCards({ readModels, projections, processors, cacheSize }: { readModels: ReadModelStore; projections: Pick<ProjectionRunner, "catchUp">; processors: Processors; cacheSize: number }) {
  const storedCards = new Map<string, Card>();

  async function findStoredCard(account: Account, customerId: string, paymentMethodId: string): Promise<Card | undefined> {
    const key = customerCardKey(account.external_account_id, customerId, paymentMethodId);
    const known = storedCards.get(key);
    if (known) return known;
    // catch the read models up only when it is not there yet
    const savedCard = () => readModels.get<CustomerCardRecord>(customerCardsProjection.name, key);
    const saved = (await savedCard()) ?? (await projections.catchUp(), await savedCard());
    if (saved) {
      const { brand, last_4, exp_month, exp_year, cardholder_name, funding } = saved;
      const card: Card = { type: "card_not_present", brand, last_4, exp_month, exp_year, cardholder_name, funding: funding as Card["funding"] };
      setBounded(storedCards, key, card, cacheSize);
      return card;
    }
    return processors.get(account.processor).retrieveStoredCard({ external_account_id: account.external_account_id, payment_method_id: paymentMethodId });
  }

  return { findStoredCard };
}

export type StoredCards = ReturnType<typeof createStoredCards>;
