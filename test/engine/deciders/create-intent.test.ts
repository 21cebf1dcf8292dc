// Spec §4.3: create a payment intent (its first event), given/when/then. Given no past events (a
// new stream); the handler gathers the account, the card on file, the new id and client secret
// when the decider asks for them, in that order.
import { describe, test } from "vitest";
import { secretDigest } from "../../../src/engine/client-secret.js";
import { decideCreateIntent, type CreateIntentContext } from "../../../src/engine/deciders/create-intent.js";
import type { Account } from "../../../src/engine/lookups/accounts.js";
import type { CreateIntentInput } from "../../../src/inputs.js";
import { decider } from "./spec.js";
import { CARD_NOT_PRESENT, created } from "./events.js";

const createIntent = decider(decideCreateIntent);
const nothing = createIntent.given([]);
const now = "2026-01-01T00:00:00.000Z";
const accountA: Account = { external_account_id: "acct_1", processor: "A", currency: "USD" };
const accountB: Account = { ...accountA, processor: "B" };
const intent = (more: Partial<CreateIntentInput> = {}): CreateIntentInput => ({ external_account_id: "acct_1", amount: "10", payment_method_types: "card", capture_method: "manual", ...more });
const context = (more: Partial<CreateIntentContext> = {}): CreateIntentContext => ({ account: accountA, payment_id: "pay_1", now, ...more });

describe("create intent decides", () => {
  test("given no account looked up yet, when an intent is created, then the decider needs the account", () => {
    nothing.when(intent(), { now }).thenNeeds("account");
  });

  test("given the account, when an intent is created, then it needs the new payment's id (taken once all is checked)", () => {
    nothing.when(intent(), { account: accountA, now }).thenNeeds("payment_id");
  });

  test("given a processor A account, when a card-not-present intent is created, then PaymentIntentCreated in the account's currency, no client secret", () => {
    nothing.when(intent({ external_customer_id: "cus_1", allow_saving_card: true }), context()).thenAppends([created({ external_customer_id: "cus_1", allow_saving_card: true })]);
  });

  test("given a JPY account, when 500 is asked, then the amount is written without minor units", () => {
    nothing.when(intent({ amount: 500 }), context({ account: { ...accountA, currency: "JPY" } })).thenAppends([created({ amount: "500", currency: "JPY" })]);
  });

  test("given an external_payment_id or an external_transaction_id, when an intent is created, then it is the one reference recorded; both, only when they are the same value in the same form", () => {
    nothing.when(intent({ external_payment_id: 12345 }), context()).thenAppends([created({ external_transaction_id: 12345 })]);
    nothing.when(intent({ external_transaction_id: "txn_1" }), context()).thenAppends([created({ external_transaction_id: "txn_1" })]);
    nothing.when(intent({ external_payment_id: "12345", external_transaction_id: "12345" }), context()).thenAppends([created({ external_transaction_id: "12345" })]);
    // the number and the string are two forms: which one would be kept "as sent"?
    nothing.when(intent({ external_payment_id: 12345, external_transaction_id: "12345" }), context()).thenRefuses("parameter_invalid", { status: 400, param: "external_transaction_id", message: "differs from external_payment_id" });
    nothing.when(intent({ external_payment_id: 12345, external_transaction_id: "txn_1" }), context()).thenRefuses("parameter_invalid", { status: 400, param: "external_transaction_id", message: "differs from external_payment_id" });
  });

  test("given a card-present intent, when it is created, then a client secret is needed and only its SHA-256 is recorded", () => {
    const input = intent({ payment_method_types: "card_present" });
    nothing.when(input, context()).thenNeeds("client_secret");
    nothing.when(input, context({ client_secret: "pay_1_secret_abc" })).thenAppends([created({ payment_method_types: "card_present", client_secret_sha256: secretDigest("pay_1_secret_abc") })]);
  });

  test("given a processor B account, when a card-not-present intent is created, then the client SDK collects it: a client secret is needed", () => {
    nothing.when(intent(), context({ account: accountB })).thenNeeds("client_secret");
    nothing.when(intent(), context({ account: accountB, client_secret: "s" })).thenAppends([created({ processor: "B", client_secret_sha256: secretDigest("s") })]);
  });

  test("given a card on file, when a stored-card intent is created, then the card is looked up first and recorded in the intent (no client secret, even on processor B)", () => {
    const input = intent({ payment_method_id: "pm_1", external_customer_id: "cus_1" });
    nothing.when(input, { account: accountB, now }).thenNeeds("stored_card");
    nothing
      .when(input, context({ account: accountB, stored_card: { card: CARD_NOT_PRESENT, processor: "B" } }))
      .thenAppends([created({ processor: "B", payment_method_id: "pm_1", external_customer_id: "cus_1", stored_card: CARD_NOT_PRESENT })]);
  });

  test("given a card on file another processor holds (saved from its terminal), when a stored-card intent is created, then the payment is that processor's", () => {
    const input = intent({ payment_method_id: "pm_1", external_customer_id: "cus_1" });
    nothing
      .when(input, context({ account: accountB, stored_card: { card: CARD_NOT_PRESENT, processor: "A" } }))
      .thenAppends([created({ processor: "A", payment_method_id: "pm_1", external_customer_id: "cus_1", stored_card: CARD_NOT_PRESENT })]);
  });
});

describe("create intent refuses", () => {
  test("given the account, when the amount is not an amount of its currency, then 400 amount_invalid before an id is taken", () => {
    nothing.when(intent({ amount: "10.001" }), { account: accountA, now }).thenRefuses("amount_invalid", { status: 400, param: "amount" });
    nothing.when(intent({ amount: "1.5" }), { account: { ...accountA, currency: "JPY" }, now }).thenRefuses("amount_invalid", { message: "decimal place" });
    nothing.when(intent({ amount: "0" }), { account: accountA, now }).thenRefuses("amount_invalid", { message: "greater than 0" });
  });

  test("given no card on file for the customer, when a stored-card intent is created, then 404 resource_missing naming payment_method_id", () => {
    nothing
      .when(intent({ payment_method_id: "pm_x", external_customer_id: "cus_1" }), { account: accountA, stored_card: null, now })
      .thenRefuses("resource_missing", { status: 404, param: "payment_method_id", message: 'no card on file "pm_x" for customer "cus_1" of this account' });
  });
});
