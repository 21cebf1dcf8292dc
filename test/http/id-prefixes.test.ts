// Read models keyed `${account}/${id}` and read by prefix: an id may hold "/", so "acct" + "x/we_1"
// is the key of "acct/x"'s we_1, and the prefix "acct/" holds "acct/x"'s rows too (a probe: with
// its own key, account acct listed acct/x's terminals, endpoints, keys and a customer's cards, and
// revoked its key). Each read is decided by the rows' own fields.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type Api, type Merchant } from "./harness.js";

let api: Api;
let attacker: Merchant;
let victim: Merchant;
beforeAll(async () => {
  api = await startApi();
  attacker = await api.merchant("acct");
  victim = await api.merchant("acct/x");
});
afterAll(() => api.close());

/** A card saved for `customer` of `m`'s account, through a blocking auth on a synchronous terminal. */
async function savedCard(m: Merchant, customer: string): Promise<string> {
  const terminal = await m.terminal("A_sync");
  const { body: intent } = await m.post("/v2/payment/intent", { amount: "5.00", payment_method_types: "card_present", capture_method: "automatic", external_customer_id: customer, allow_saving_card: true });
  const blocking = m.post("/v2/payment/auth", { payment_id: intent.payment_id, terminal_id: terminal });
  await api.simulators.terminal.untilCollecting(terminal);
  await m.post("/sim/terminal/present-card", { terminal_id: terminal, card_number: "4242424242424242" });
  const { body: paid } = await blocking;
  expect(paid.payment_method_id).toMatch(/^pm_/);
  return paid.payment_method_id;
}

describe("an account whose id is another's and a '/' more", () => {
  it("is not reached through the other's prefix: lists, a key revoked, an endpoint deleted or its deliveries", async () => {
    const terminal = await victim.terminal("A_async");
    const { body: endpoint } = await victim.post("/v2/webhook_endpoints", { url: "https://example.com/hook" });
    const { body: keys } = await victim.get(`/v2/api_keys?external_account_id=${encodeURIComponent("acct/x")}`);
    const victimKey = keys.data[0].id as string;

    expect((await attacker.get("/v2/hardware?external_account_id=acct")).body.data.map((t: { terminal_id: string }) => t.terminal_id)).not.toContain(terminal);
    expect((await attacker.get("/v2/webhook_endpoints?external_account_id=acct")).body.data).toEqual([]);
    expect((await attacker.get("/v2/api_keys?external_account_id=acct")).body.data.map((k: { external_account_id: string }) => k.external_account_id)).toEqual(["acct"]);
    const viaSlash = (id: string) => encodeURIComponent(`x/${id}`);
    expect((await api.request("DELETE", `/v2/api_keys/${viaSlash(victimKey)}?external_account_id=acct`, { key: attacker.key })).status).toBe(404);
    expect((await api.request("DELETE", `/v2/webhook_endpoints/${viaSlash(endpoint.id)}?external_account_id=acct`, { key: attacker.key })).status).toBe(404);
    expect((await attacker.get(`/v2/webhook_endpoints/${viaSlash(endpoint.id)}/deliveries?external_account_id=acct`)).status).toBe(404);
    // the victim's key and endpoint are as they were
    expect((await victim.get(`/v2/account`)).status).toBe(200);
    expect((await victim.get(`/v2/webhook_endpoints?external_account_id=${encodeURIComponent("acct/x")}`)).body.data).toMatchObject([{ id: endpoint.id, status: "enabled" }]);
  });

  it("nor a customer whose id is another's and a '/' more: each customer lists its own cards", async () => {
    const card = await savedCard(victim, "c");
    const listed = await attacker.get(`/v1/customer/card?external_account_id=acct&external_customer_id=${encodeURIComponent("x/c")}`);
    expect(listed.body.data).toEqual([]);
    // inside one account too
    const mine = await savedCard(attacker, "k/z");
    expect((await attacker.get(`/v1/customer/card?external_account_id=acct&external_customer_id=k`)).body.data).toEqual([]);
    expect((await attacker.get(`/v1/customer/card?external_account_id=acct&external_customer_id=${encodeURIComponent("k/z")}`)).body.data.map((c: { payment_method_id: string }) => c.payment_method_id)).toEqual([mine]);
    expect(card).not.toBe(mine);
  });
});
