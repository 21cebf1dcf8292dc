// API keys: a missing or wrong key is 401; a key acts only for its own merchant account (another
// account's external_account_id is 403, another account's payment or terminal reads as missing).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApiKeys, sha256 } from "../../src/api-keys.js";
import { createEngine } from "../../src/engine.js";
import type { EventStore } from "../../src/store/port.js";
import { TerminalListOut } from "../../src/http/schemas.js";
import { expectProblem, expectShape, startApi, type Api, type Merchant } from "./harness.js";

let api: Api;
let alice: Merchant;
let bob: Merchant;
beforeEach(async () => {
  api = await startApi();
  alice = await api.merchant("acct_alice");
  bob = await api.merchant("acct_bob");
});
afterEach(async () => {
  await api.close();
});

const body = { external_account_id: "acct_alice", amount: "1.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c" };

describe("authentication", () => {
  it("401 without a key, with a wrong key, with another scheme; WWW-Authenticate names Bearer", async () => {
    for (const headers of [{} as Record<string, string>, { authorization: "Bearer sk_wrong" }, { authorization: `Basic ${alice.key}` }, { authorization: `Bearer ${alice.key}x` }, { authorization: "Bearer " }]) {
      const res = await api.request("POST", "/v2/payment/intent", { body, headers });
      expectProblem(res, 401, "unauthorized");
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="cardflow"');
    }
    expectProblem(await api.request("GET", "/v2/hardware?external_account_id=acct_alice"), 401, "unauthorized");
    // authentication comes before the body is looked at
    expectProblem(await api.request("POST", "/v2/payment/intent", { raw: "{oops" }), 401, "unauthorized");
    expect((await api.store.readAll()).filter((e) => e.stream.startsWith("payment-"))).toEqual([]);
  });

  it("a malformed Authorization is 401 naming its fault, none of it quoted; each counts as a failed authentication (429 past the limit)", async () => {
    const detail = (authorization: string) => api.request("GET", "/v2/hardware?external_account_id=acct_alice", { headers: { authorization } }).then((res) => expectProblem(res, 401, "unauthorized", null).detail);
    expect(await detail(`Bearer  ${alice.key}`)).toBe("Authorization: must be `Bearer <key>` with one space between Bearer and the key");
    expect(await detail(`Bearer\t${alice.key}`)).toBe("Authorization: must be `Bearer <key>` with one space between Bearer and the key");
    expect(await detail(`Bearer sk_${"a".repeat(600)}`)).toBe("the API key is too long: 603 characters, where a key has at most 512");
    expect(await detail(`Bearer ${alice.key} ${alice.key}`)).toBe("the API key has a character no API key has (white space, a control or non-ASCII character): send it as it was issued");
    expect(await detail(`Basic ${alice.key}`)).toBe("Authorization: must be `Bearer <key>`: another scheme is not taken");
    expect(await detail("Bearer ")).toBe("Authorization: no API key after Bearer; send Authorization: Bearer <key>");
    expect(await detail("Bearer sk_wrong")).toBe("the API key is not valid");
    expect(expectProblem(await api.request("GET", "/v2/hardware?external_account_id=acct_alice"), 401, "unauthorized").detail).toBe("send an API key: Authorization: Bearer <key>");
    // 8 failures so far; the limit is 20 a minute per client address
    for (let i = 0; i < 12; i++) await detail(`Bearer  ${alice.key}`);
    expectProblem(await api.request("GET", "/v2/hardware?external_account_id=acct_alice", { headers: { authorization: `Bearer  ${alice.key}` } }), 429, "too_many_failed_authentications");
    expect((await alice.get("/v2/hardware?external_account_id=acct_alice")).status).toBe(200);
  });

  it("keys are stored only as their SHA-256, each bound to one account", async () => {
    const all = JSON.stringify(await api.store.readAll());
    expect(all).not.toContain(alice.key);
    const issued = (await api.store.readAll()).filter((e) => e.type === "ApiKeyIssued");
    expect(issued.map((e) => (e.data as { external_account_id: string }).external_account_id)).toEqual(["acct_alice", "acct_bob"]);
    expect(issued[0]!.stream).toBe(`apikey-${sha256(alice.key)}`);
  });

  it("the scheme name is case-insensitive", async () => {
    expect((await api.request("POST", "/v2/payment/intent", { body, headers: { authorization: `bearer ${alice.key}` } })).status).toBe(200);
  });
});

describe("cross-account isolation", () => {
  it("another account's external_account_id is 403, in a body or a query", async () => {
    expectProblem(await bob.postRaw("/v2/payment/intent", body), 403, "account_forbidden", "external_account_id");
    expectProblem(await api.request("GET", "/v2/hardware?external_account_id=acct_alice", { key: bob.key }), 403, "account_forbidden", "external_account_id");
    expectProblem(await bob.postRaw("/v2/hardware", { external_account_id: "acct_nobody", terminal_type: "A_sync" }), 403, "account_forbidden");
  });

  it("another account's payment and terminal read as missing (404)", async () => {
    const { body: intent } = await alice.postRaw("/v1/payment/intent", body);
    expectProblem(await bob.read(intent.payment_id), 404, "resource_missing", "payment_id");
    for (const path of ["/v1/payment/auth", "/v1/payment/cancel", "/v1/payment/refund"]) {
      expectProblem(await bob.post(path, { payment_id: intent.payment_id }), 404, "resource_missing", "payment_id");
    }
    expectProblem(await bob.post("/v1/payment/capture", { payment_id: intent.payment_id, amount: 1 }), 404, "resource_missing");
    expectProblem(await bob.post("/v1/customer/card", { payment_id: intent.payment_id, external_customer_id: "c" }), 404, "resource_missing");

    const terminal = await alice.terminal("A_async");
    const { body: own } = await bob.post("/v2/payment/intent", { amount: "2.00", payment_method_types: "card_present", capture_method: "manual" });
    expectProblem(await bob.post("/v2/payment/auth", { payment_id: own.payment_id, terminal_id: terminal }), 404, "resource_missing", "terminal_id");
    expectProblem(await bob.post("/sim/terminal/present-card", { terminal_id: terminal }), 404, "resource_missing", "terminal_id");
    expect(expectShape(TerminalListOut, (await bob.get("/v2/hardware?external_account_id=acct_bob")).body).data).toEqual([]);
    // alice still sees her payment untouched
    expect((await alice.read(intent.payment_id)).body.status).toBe("requires_payment_method");
  });

  it("the client-SDK endpoint needs no API key, only the intent's client secret", async () => {
    const b = await api.merchant("acct_b", "B");
    const { body: intent } = await b.post("/v2/payment/intent", { amount: "4.00", payment_method_types: "card", capture_method: "manual", allow_saving_card: true });
    const res = await api.request("POST", "/v2/sdk/payment-method", { body: { client_secret: intent.client_secret } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ payment_id: intent.payment_id, status: "requires_capture", amount: "4.00", currency: "USD", payment: expect.objectContaining({ last_4: "4242" }) });
  });

  it("saving a card from a client (spec §4.7): no API key, the payment's client secret; nothing else opens it", async () => {
    const b = await api.merchant("acct_b", "B");
    const create = () => b.post("/v2/payment/intent", { amount: "4.00", payment_method_types: "card", capture_method: "manual", allow_saving_card: true });
    const { body: intent } = await create();
    const { body: other } = await create();
    for (const { client_secret } of [intent, other]) expect((await api.request("POST", "/v2/sdk/payment-method", { body: { client_secret } })).status).toBe(200);
    const save = (fields: Record<string, unknown>, headers?: Record<string, string>) =>
      api.request("POST", "/v1/customer/card", { body: { payment_id: intent.payment_id, external_account_id: "acct_b", external_customer_id: "cus_1", ...fields }, ...(headers && { headers }) });
    const before = (await api.store.readAll()).length;
    // neither a key nor a secret; another payment's secret; a wrong one; the payment in another account
    expectProblem(await save({}), 401, "unauthorized");
    expectProblem(await save({ client_secret: other.client_secret }), 401, "unauthorized", "client_secret");
    expectProblem(await save({ client_secret: `${intent.payment_id}_secret_wrong` }), 401, "unauthorized", "client_secret");
    expectProblem(await save({ client_secret: intent.client_secret, external_account_id: "acct_alice" }), 401, "unauthorized", "client_secret");
    // a secret does not stand in for a wrong key
    expectProblem(await save({ client_secret: intent.client_secret }, { authorization: "Bearer sk_wrong" }), 401, "unauthorized");
    expect((await api.store.readAll()).length).toBe(before);

    const saved = await save({ client_secret: intent.client_secret });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ external_account_id: "acct_b", external_customer_id: "cus_1", payment_id: intent.payment_id, payment_method_id: expect.stringMatching(/^pm_/) });
    // the merchant's server sees it, and the secret does not reach the events
    expect((await b.get("/v1/customer/card?external_account_id=acct_b&external_customer_id=cus_1")).body.data).toEqual([saved.body]);
    expect(JSON.stringify(await api.store.readAll())).not.toContain(intent.client_secret);
  });
});

describe("a key's lookup", () => {
  it("requests of one key meanwhile share one read of its stream; a failed read is not kept", async () => {
    const engine = createEngine();
    await engine.openAccount({ external_account_id: "acct_k", processor: "A" });
    let reads = 0;
    let failNext = false;
    const store: EventStore = {
      ...engine.store,
      readStream: async (stream, options) => {
        if (stream.startsWith("apikey-")) reads++;
        if (failNext) throw ((failNext = false), new Error("store away"));
        return engine.store.readStream(stream, options);
      },
    };
    const keys = createApiKeys({ ...engine, store }, { cacheMs: 60_000 });
    const { key, key_id } = await keys.issue("acct_k");
    const owners = await Promise.all(Array.from({ length: 64 }, () => keys.authenticate(key)));
    expect(new Set(owners.map((o) => o?.key_id))).toEqual(new Set([key_id]));
    expect(reads).toBe(1);

    const other = (await keys.issue("acct_k")).key;
    failNext = true;
    await expect(Promise.all([keys.authenticate(other), keys.authenticate(other)])).rejects.toThrow("store away");
    expect((await keys.authenticate(other))?.external_account_id).toBe("acct_k"); // read again, not the failure kept
    expect(reads).toBe(3);
    await engine.close();
  });
});
