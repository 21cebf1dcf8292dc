// Spec §4.3: create a payment intent: its stream's first event. Answers the new payment and its
// client secret (shown this once; null when no client SDK collects the card).
import type { Clock } from "../../clock.js";
import type { Ids } from "../../ids.js";
import { CreateIntentInput, type CreateIntentRequest, parseInput } from "../../inputs.js";
import { commandClock, type CommandContext } from "../context.js";
import { decideCreateIntent, type CreateIntentContext, type CreateIntentNeed } from "../deciders/create-intent.js";
import type { AccountLookups } from "../lookups/accounts.js";
import type { StoredCards } from "../lookups/stored-cards.js";
import type { Loaded } from "../streams/payment-streams.js";
import type { Pipeline } from "./pipeline.js";

interface Deps {
  pipeline: Pipeline;
  accounts: Pick<AccountLookups, "getAccount">;
  storedCards: StoredCards;
  clock: Clock;
  ids: Ids;
}

export function createIntentHandler({ pipeline, accounts, storedCards, clock, ids }: Deps) {
  return async (raw: CreateIntentRequest, ctx: CommandContext = {}): Promise<{ payment: Loaded; client_secret: string | null }> => {
    const input = parseInput(CreateIntentInput, raw);
    ctx = commandClock(clock, ctx);
    // what the decision needs, gathered in the order it asks (a missing account before a bad amount...)
    const gather: Record<CreateIntentNeed, (context: CreateIntentContext) => Promise<Partial<CreateIntentContext>>> = {
      account: async () => ({ account: await accounts.getAccount(input.external_account_id) }),
      stored_card: async ({ account }) => ({ stored_card: (await storedCards.findStoredCard(account!, input.external_customer_id!, input.payment_method_id!)) ?? null }),
      payment_id: async () => ({ payment_id: ids.id("pi") }),
      client_secret: async ({ payment_id }) => ({ client_secret: `${payment_id}_${ids.secret("secret")}` }),
    };
    let client_secret: string | null = null;
    const step = {
      command: "create",
      decide: (i: typeof input, none: Loaded["snapshot"], context: CreateIntentContext) => ((client_secret = context.client_secret ?? null), decideCreateIntent(i, none, context)),
      gather: (need: CreateIntentNeed, _none: Loaded, context: CreateIntentContext) => gather[need](context),
    };
    // the idempotency record stores the answer with its client secret
    const answer = ctx.idempotency && ((record: object) => ctx.idempotency!({ ...record, client_secret }));
    const payment = await pipeline.create(step, input, { now: ctx.now! }, { ...ctx, idempotency: answer });
    return { payment, client_secret };
  };
}
