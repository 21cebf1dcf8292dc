// Spec §4.3: create a payment intent (its first event). A card on file is looked up now; a client
// secret is issued when a client SDK collects the card, and only its SHA-256 is recorded.
import type { Card, PaymentEventOf } from "../../../machines/events.js";
import type { PaymentRecord } from "../../present/payment-record.js";
import { NotFound } from "../../errors.js";
import { CreateIntentInput, parseInput } from "../../inputs.js";
import { formatAmount } from "../../money.js";
import type { Core } from "../core.js";
import { secretDigest } from "../client-secret.js";
import type { CreatedIntent } from "../../present/payment-record.js";
import { commandClock, type CommandContext } from "../payment-streams.js";

export function createIntent(core: Core) {
  return async (input: unknown, ctx: CommandContext = {}): Promise<CreatedIntent> => {
    const req = parseInput(CreateIntentInput, input);
    const account = await core.getAccount(req.external_account_id);
    const amount = core.amountIn(req.amount, account.currency);
    let stored_card: Card | null = null;
    if (req.payment_method_id !== undefined) {
      stored_card = (await core.findStoredCard(account, req.external_customer_id!, req.payment_method_id)) ?? null;
      // 404 for another customer's card as for a card that never existed: nothing tells them apart
      if (!stored_card) throw new NotFound("card on file", req.payment_method_id, "payment_method_id", `for customer ${JSON.stringify(req.external_customer_id)} of this account`);
    }
    ctx = commandClock(core.clock, ctx);
    const payment_id = core.ids.id("pi");
    const collectsOnClient = req.payment_method_types === "card_present" || (account.processor === "B" && req.payment_method_id === undefined);
    const client_secret = collectsOnClient ? `${payment_id}_${core.ids.secret("secret")}` : null;
    const created: PaymentEventOf<"PaymentIntentCreated"> = {
      type: "PaymentIntentCreated",
      version: 1,
      data: {
        payment_id,
        external_account_id: account.external_account_id,
        amount: formatAmount(amount, account.currency),
        currency: account.currency,
        payment_method_types: req.payment_method_types,
        capture_method: req.capture_method,
        processor: account.processor,
        external_transaction_id: req.external_payment_id ?? req.external_transaction_id ?? null,
        external_customer_id: req.external_customer_id ?? null,
        payment_method_id: req.payment_method_id ?? null,
        stored_card,
        allow_saving_card: req.allow_saving_card ?? false,
        // the secret is shown once, in this answer; the event keeps its digest
        client_secret: null,
        client_secret_sha256: client_secret === null ? null : secretDigest(client_secret),
        date_created: ctx.now!,
      },
    };
    const answer = ctx.idempotency && ((record: object) => ctx.idempotency!({ ...(record as PaymentRecord), client_secret }));
    const loaded = await core.payments.create(payment_id, [created], { ...ctx, idempotency: answer });
    return { ...core.recordOf(loaded), client_secret };
  };
}
