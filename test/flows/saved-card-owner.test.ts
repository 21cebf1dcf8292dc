// A card on file is charged only for the account and the customer it was saved for (issue 25,
// point 4): under another customer or another account it is unknown, the same answer (404
// resource_missing on payment_method_id) as a token that never existed, and nothing is appended.
// In every mode: with the sandbox's simulators, and with a processor adapter that answers any
// token it is asked about (the read model knows whose card it is, whatever the processor says).
import { describe, expect, test } from "vitest";
import { createEngine } from "../../src/engine.js";
import { NotFound } from "../../src/errors.js";
import type { Processors } from "../../src/processors/port.js";
import { startApi } from "../http/harness.js";
import { B, rig } from "./harness.js";

/** Saves the card of a card-form payment for `customer` on account B; its token. */
async function savedFor(r: Awaited<ReturnType<typeof rig>>, customer: string) {
  const created = await r.intent(B, { payment_method_types: "card", capture_method: "manual", allow_saving_card: true, amount: "30.00" });
  await r.sdk.collectPaymentMethod(created.client_secret!);
  return (await r.engine.saveCard({ external_account_id: B, payment_id: created.payment_id, external_customer_id: customer })).payment_method_id;
}

const charge = (account: string, payment_method_id: string, external_customer_id: string) => ({
  external_account_id: account,
  amount: "5.00",
  payment_method_types: "card" as const,
  capture_method: "manual" as const,
  payment_method_id,
  external_customer_id,
});

/** The refusal of a create, with the number of events appended meanwhile. */
async function refusal(engine: ReturnType<typeof createEngine>, input: ReturnType<typeof charge>) {
  const before = (await engine.store.readAll()).length;
  const error = await engine.createIntent(input).catch((e: unknown) => e);
  return { error, appended: (await engine.store.readAll()).length - before };
}

/** A processor that answers a card for any token, whoever asks: the worst an adapter could do. */
const careless = (processors: Processors): Processors => ({
  ...processors,
  get: (name) => ({ ...processors.get(name), retrieveStoredCard: async () => ({ type: "card_not_present", brand: "visa", last_4: "4242", exp_month: "12", exp_year: 2040, cardholder_name: null, funding: "credit" }) }),
});

describe("a card on file is its customer's only", () => {
  test.each([
    ["the sandbox simulators", false],
    ["an adapter that answers any token", true],
  ])("with %s: charged for its customer; another customer or account gets the unknown card's 404", async (_, isCareless) => {
    const r = await rig();
    const token = await savedFor(r, "cus_owner");
    const engine = isCareless ? createEngine({ store: r.engine.store, readModels: r.engine.readModels, clock: r.engine.clock, ids: r.engine.ids, processors: careless(r.sims) }) : r.engine;
    expect(await engine.createIntent(charge(B, token, "cus_owner"))).toMatchObject({ payment_method_id: token, external_customer_id: "cus_owner" });

    const unknown = await refusal(engine, charge(B, "pm_never_issued", "cus_owner"));
    const otherCustomer = await refusal(engine, charge(B, token, "cus_thief"));
    // the other account is on processor A: the sandbox's vault knows the token is B's account's
    const otherAccount = await refusal(engine, charge("acct_a", token, "cus_owner"));
    for (const { error, appended } of isCareless ? [otherCustomer] : [unknown, otherCustomer, otherAccount]) {
      expect(error).toBeInstanceOf(NotFound);
      expect(error).toMatchObject({ status: 404, code: "resource_missing", param: "payment_method_id" });
      expect(appended).toBe(0);
    }
    expect((otherCustomer.error as Error).message).toBe(`no card on file "${token}" for customer "cus_thief" of this account`);
    if (isCareless) return; // a token never saved here: the adapter decides (this one says yes)
    expect((unknown.error as Error).message).toBe(`no card on file "pm_never_issued" for customer "cus_owner" of this account`);
    // a sandbox test token is anyone's
    expect(await engine.createIntent(charge(B, "pm_card_visa", "cus_thief"))).toMatchObject({ payment_method_id: "pm_card_visa" });
  });
});

test("over HTTP: another customer's card answers exactly as an unknown card does", async () => {
  const api = await startApi();
  try {
    const b = await api.merchant("acct_http_b", "B");
    const created = await api.engine.createIntent({ external_account_id: b.account, amount: "8.00", payment_method_types: "card", capture_method: "manual", allow_saving_card: true });
    const collected = await api.request("POST", "/v2/sdk/payment-method", { body: { client_secret: created.client_secret } });
    expect(collected.status).toBe(200);
    const { payment_method_id } = await api.engine.saveCard({ external_account_id: b.account, payment_id: created.payment_id, external_customer_id: "cus_owner" });
    const attempt = (token: string, customer: string) => b.post("/v2/payment/intent", { amount: "1.00", payment_method_types: "card", capture_method: "manual", payment_method_id: token, external_customer_id: customer });
    expect((await attempt(payment_method_id, "cus_owner")).status).toBe(200);
    const thief = await attempt(payment_method_id, "cus_thief");
    const unknown = await attempt("pm_never_issued", "cus_thief");
    expect([thief.status, unknown.status]).toEqual([404, 404]);
    const shape = ({ detail: _, request_id: __, ...rest }: Record<string, unknown>) => rest;
    expect(shape(thief.body)).toEqual(shape(unknown.body));
    expect(thief.body).toMatchObject({ code: "resource_missing", param: "payment_method_id" });
  } finally {
    await api.close();
  }
});
