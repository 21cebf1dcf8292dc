// Spec §4.3: create a payment intent (its first event). A card on file is looked up now; a client
// secret is issued when a client SDK collects the card, and only its SHA-256 is recorded.
import { collectsOnClient } from "../../../machines/client-sdk.js";
import type { PaymentEventOf } from "../../../machines/events.js";
import type { PaymentSnapshot } from "../../../machines/fold.js";
import { InvalidRequest, NotFound } from "../../errors.js";
import type { CreateIntentInput } from "../../inputs.js";
import { secretDigest } from "../client-secret.js";
import type { Account } from "../lookups/accounts.js";
import type { StoredCard } from "../lookups/stored-cards.js";
import { amountIn } from "./amounts.js";
import type { Decision } from "./decision.js";

export interface CreateIntentContext {
  account?: Account;
  /** The card on file named by payment_method_id, and the processor holding it (null: none). */
  stored_card?: StoredCard | null;
  /** The new payment's id, and its client secret when a client SDK collects its card (taken once all is checked). */
  payment_id?: string;
  client_secret?: string;
  /** The command's clock reading. */
  now: string;
}

export type CreateIntentNeed = "account" | "stored_card" | "payment_id" | "client_secret";

export function decideCreateIntent(input: CreateIntentInput, _none: PaymentSnapshot, context: CreateIntentContext): Decision<CreateIntentNeed> {
  const { account, stored_card, payment_id, client_secret } = context;
  // spec §2.1: external_payment_id "comes back as external_transaction_id": one reference, never two
  const { external_payment_id: reference, external_transaction_id: also } = input;
  // exactly: the number 5 and the string "5" are two forms, and a reference is kept as sent
  if (reference !== undefined && also !== undefined && reference !== also) {
    return { refuse: new InvalidRequest(`external_transaction_id: ${JSON.stringify(also)} differs from external_payment_id ${JSON.stringify(reference)}; they are one reference (returned as external_transaction_id): give one`, "external_transaction_id", "parameter_invalid") };
  }
  if (!account) return { need: "account" };
  const amount = amountIn(input.amount, account.currency);
  if (typeof amount !== "string") return amount;
  if (input.payment_method_id !== undefined) {
    if (stored_card === undefined) return { need: "stored_card" };
    // 404 for another customer's card as for a card that never existed: nothing tells them apart
    if (stored_card === null) return { refuse: new NotFound("card on file", input.payment_method_id, "payment_method_id", `for customer ${JSON.stringify(input.external_customer_id)} of this account`) };
  }
  if (payment_id === undefined) return { need: "payment_id" };
  const sdkCollects = collectsOnClient({ payment_method_types: input.payment_method_types, processor: account.processor, payment_method_id: input.payment_method_id });
  if (sdkCollects && client_secret === undefined) return { need: "client_secret" };
  const created: PaymentEventOf<"PaymentIntentCreated"> = {
    type: "PaymentIntentCreated",
    version: 2,
    data: {
      payment_id,
      external_account_id: account.external_account_id,
      amount,
      currency: account.currency,
      payment_method_types: input.payment_method_types,
      capture_method: input.capture_method,
      // a card on file is charged through the processor holding its token
      processor: stored_card?.processor ?? account.processor,
      external_transaction_id: input.external_payment_id ?? input.external_transaction_id ?? null,
      external_customer_id: input.external_customer_id ?? null,
      payment_method_id: input.payment_method_id ?? null,
      stored_card: stored_card?.card ?? null,
      allow_saving_card: input.allow_saving_card ?? null,
      // the secret is shown once, in the answer; the event keeps its digest
      client_secret: null,
      client_secret_sha256: sdkCollects ? secretDigest(client_secret!) : null,
      date_created: context.now,
    },
  };
  return { append: [created] };
}
