// Spec §4.7: save the payment's card on file for a customer. The answer is the card as its
// CardSaved event says: the payment's own stream, no read model to wait for (the customer_cards
// read model folds the very same event). A stored-card charge's card is on file already: saving it
// for its customer answers that card, as saved by the payment that saved it (the read model).
import { streams } from "../../../machines/events.js";
import { customerCardsProjection, type CustomerCardRecord } from "../../../projections/customer-cards.js";
import type { Clock } from "../../clock.js";
import { parseInput, SaveCardInput, type SaveCardRequest } from "../../inputs.js";
import type { StreamReader } from "../../store/port.js";
import { commandClock, type CommandContext } from "../context.js";
import { decideSaveCard } from "../deciders/save-card.js";
import type { StoredCards } from "../lookups/stored-cards.js";
import { viewOf, type Loaded } from "../streams/payment-streams.js";
import type { Pipeline } from "./pipeline.js";

interface Deps {
  pipeline: Pipeline;
  store: StreamReader;
  clock: Clock;
  storedCards: Pick<StoredCards, "cardSavedHere">;
}

export function saveCardHandler({ pipeline, store, clock, storedCards }: Deps) {
  return async (raw: SaveCardRequest, ctx: CommandContext = {}): Promise<CustomerCardRecord> => {
    const input = parseInput(SaveCardInput, raw);
    ctx = commandClock(clock, ctx);
    let cardOnFile: CustomerCardRecord | null = null;
    // the card on file a stored-card charge charged (the decider asks for it): read once it is asked
    const gather = async (_: "card_on_file", { snapshot }: Loaded) => {
      const { intent } = snapshot.context;
      cardOnFile = (await storedCards.cardSavedHere(intent!.external_account_id, intent!.payment_method_id!)) ?? null;
      return { cardOnFile };
    };
    const save = (loaded: Loaded) => pipeline.run(loaded, { command: "save_card", decide: decideSaveCard, gather }, input, ctx);
    // called from a client (spec §4.7): with the payment's secret
    const named = { accountId: input.external_account_id, paymentId: input.payment_id };
    const loaded = await (input.client_secret === undefined ? pipeline.onPayment(named.accountId, named.paymentId, save) : pipeline.onPaymentOfSecret(input.client_secret, save, named));
    const { saved_card } = viewOf(loaded);
    // a stored-card charge: the card on file it charged, as the decider found it
    if (!saved_card && cardOnFile) return cardOnFile;
    const events = await store.readStream(streams.payment(input.payment_id), { direction: "backwards" });
    const saved = events.find((e) => e.type === "CardSaved" && (e.data as { payment_method_id: string }).payment_method_id === saved_card?.payment_method_id);
    if (!saved) throw new Error(`payment ${input.payment_id}: no card saved`);
    return customerCardsProjection.apply(undefined, saved);
  };
}
