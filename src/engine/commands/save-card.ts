// Spec §4.7: save the payment's card on file for a customer; §2.3: a customer's cards on file.
import { streams } from "../../../machines/events.js";
import { customerCardKey, customerCardsProjection, type CustomerCardRecord } from "../../../projections/customer-cards.js";
import { parseInput, SaveCardInput } from "../../inputs.js";
import { can } from "../allowed.js";
import { attempt, type AttemptStep } from "../attempt.js";
import type { Core } from "../core.js";
import { commandClock, type CommandContext, type Loaded } from "../payment-streams.js";

export const saveCardStep = (core: Core, loaded: Loaded, external_customer_id: string): AttemptStep => ({
  attempt: (attempt_id) => ({ type: "CardSaveAttempted", version: 1, data: { attempt_id, external_customer_id } }),
  call: async (key) => ({ call: "save_card", ...(await core.processorOf(loaded).saveCard({ payment: core.viewOf(loaded), external_customer_id, key })) }),
});

export function saveCard(core: Core) {
  return async (input: unknown, ctx: CommandContext = {}): Promise<CustomerCardRecord> => {
    const req = parseInput(SaveCardInput, input);
    ctx = commandClock(core.clock, ctx);
    const loaded = await core.payments.onPayment(req.external_account_id, req.payment_id, async (loaded) => {
      const saved = core.viewOf(loaded).saved_card;
      // saving again for the same customer answers with the card already saved
      if (saved?.external_customer_id === req.external_customer_id) return loaded;
      const step = saveCardStep(core, loaded, req.external_customer_id);
      if (!can(loaded.snapshot, step.attempt("probe"))) {
        const reason = core.viewOf(loaded).terminal?.terminal_type === "A_async" ? "the asynchronous terminal type does not support card on file" : undefined;
        core.refuse(loaded, "save_card", reason ?? "this payment's card cannot be saved now");
      }
      return attempt(core, req.payment_id, loaded, step, ctx, "save_card");
    });
    // The answer is the card as its CardSaved event says: the payment's own stream, no read model
    // to wait for (the customer_cards read model folds the very same event).
    const { saved_card } = core.viewOf(loaded);
    const events = await core.store.readStream(streams.payment(req.payment_id), { direction: "backwards" });
    const saved = events.find((e) => e.type === "CardSaved" && (e.data as { payment_method_id: string }).payment_method_id === saved_card?.payment_method_id);
    if (!saved) throw new Error(`payment ${req.payment_id}: no card saved`);
    return customerCardsProjection.apply(undefined, saved);
  };
}

export function listCustomerCards(core: Core) {
  return async (accountId: string, customerId: string): Promise<CustomerCardRecord[]> => {
    await core.getAccount(accountId);
    // the list reflects every card saved before the request (bounded wait: ReadModelBehind)
    await core.projections.caughtUp();
    return core.readModels.list<CustomerCardRecord>(customerCardsProjection.name, customerCardKey(accountId, customerId));
  };
}
