// Cards on file, as a stored-card charge finds them. Cards on file are never changed nor removed
// once saved: one found is kept (bounded), so charging a card on file costs no read-model round
// trip after the first. A card is found only for the account AND the customer it was saved for
// (issue 25): under another customer it is unknown, the same answer as a card that never existed.
// A token is its processor's: a card is charged through the processor that saved it (a card
// presented on another processor's terminal than the account's), else the account's.
import { Card, type Processor } from "../../../machines/events.js";
import { customerCardsProjection, type CustomerCardRecord } from "../../../projections/customer-cards.js";
import type { ProjectionRunner } from "../../../projections/runner.js";
import { setBounded } from "../../bounded.js";
import { checkedAnswer } from "../../processors/answers.js";
import type { Processors } from "../../processors/port.js";
import { TEST_PAYMENT_METHODS } from "../../processors/test-cards.js";
import type { ReadModelStore } from "../../store/port.js";
import type { PaymentStreams } from "../streams/payment-streams.js";
import type { Account } from "./accounts.js";
import { withoutAttempt } from "../handlers/processor-calls.js";

/** A card on file and the processor that holds its token. */
export interface StoredCard {
  card: Card;
  processor: Processor;
}

interface Deps {
  payments: Pick<PaymentStreams, "load">;
  readModels: Pick<ReadModelStore, "query">;
  projections: Pick<ProjectionRunner, "ready" | "caughtUp">;
  processors: Processors;
  cacheSize: number;
}

export function createStoredCards({ payments, readModels, projections, processors, cacheSize }: Deps) {
  const storedCards = new Map<string, StoredCard>();

  /** The card on file saved here (CardSaved) under this token in the account, whichever customer's; undefined when none. */
  async function cardSavedHere(accountId: string, paymentMethodId: string): Promise<CustomerCardRecord | undefined> {
    const find = async () => (await readModels.query<CustomerCardRecord>(customerCardsProjection.name, { where: { account: accountId, payment_method_id: paymentMethodId }, order: ["key"], direction: "asc", limit: 1 }))[0];
    await projections.ready();
    const saved = await find();
    if (saved) return saved;
    await projections.caughtUp();
    return find();
  }

  async function findStoredCard(account: Account, customerId: string, paymentMethodId: string): Promise<StoredCard | undefined> {
    // not the read model's key: "acct" + "x/c" would be "acct/x" + "c"
    const key = JSON.stringify([account.external_account_id, customerId, paymentMethodId]);
    const known = storedCards.get(key);
    if (known) return known;
    const processor = async () => {
      const asked = { external_account_id: account.external_account_id, external_customer_id: customerId, payment_method_id: paymentMethodId };
      const card = await withoutAttempt(account.processor, "retrieveStoredCard", () => processors.get(account.processor).retrieveStoredCard(asked).then((card) => checkedAnswer(Card.optional(), card, account.processor, "retrieveStoredCard")));
      return card && { card, processor: account.processor };
    };
    // a sandbox test token is anyone's and needs no read model: it never waits (outside the
    // sandbox no processor knows it: unknown)
    if (Object.hasOwn(TEST_PAYMENT_METHODS, paymentMethodId)) return processor();
    // A card saved here (CardSaved, folded into customer_cards) is found by its token in the account
    // and is its customer's only, whatever a processor would answer. Not there yet? Saved moments
    // ago: the read models reflect every write acknowledged before this request once caughtUp()
    // returns (bounded, shared with every other waiting read). Never saved here: the processor's
    // own vault decides (for this customer).
    const saved = await cardSavedHere(account.external_account_id, paymentMethodId);
    if (!saved) return processor();
    if (saved.external_customer_id !== customerId) return undefined;
    const { brand, last_4, exp_month, exp_year, cardholder_name, funding } = saved;
    const card: Card = { type: "card_not_present", brand, last_4, exp_month, exp_year, cardholder_name, funding: funding as Card["funding"] };
    // the processor the saving payment was on (its terminal's, or its own)
    const savedOn = (await payments.load(saved.payment_id))?.snapshot.context;
    const found = { card, processor: savedOn?.processor ?? savedOn?.intent?.processor ?? account.processor };
    setBounded(storedCards, key, found, cacheSize);
    return found;
  }

  return { findStoredCard, cardSavedHere };
}

export type StoredCards = ReturnType<typeof createStoredCards>;
