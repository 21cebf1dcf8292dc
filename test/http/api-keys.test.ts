// API keys over HTTP (the console's routes) and in the library: a merchant's key lists and revokes
// its own account's keys, never another account's (404, as an unknown key); a revoked key is 401;
// a key issued with an expiry stops at it; last use is recorded coarsely, as operational state
// (no event on any stream).
import { afterAll, describe, expect, it } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { ApiKeyOut } from "../../src/http/routes/api-keys.js";
import { expectProblem, expectShape, startApi } from "./harness.js";

const api = await startApi();
afterAll(() => api.close());

describe("GET /v2/api_keys, DELETE /v2/api_keys/{id}", () => {
  it("lists the account's own keys without the keys; revokes its own, 404 for another account's", async () => {
    const a = await api.merchant("acct_keys_a");
    const b = await api.merchant("acct_keys_b");
    const apiKeys = createApiKeys(api.engine);
    const second = await apiKeys.issue(a.account, "test");
    const listed = await a.get(`/v2/api_keys?external_account_id=${a.account}`);
    expect(listed.status).toBe(200);
    const keys = listed.body.data.map((k: unknown) => expectShape(ApiKeyOut, k));
    expect(keys.map((k: { id: string }) => k.id)).toContain(second.key_id);
    expect(keys.every((k: { external_account_id: string; status: string }) => k.external_account_id === a.account && k.status === "active")).toBe(true);
    expect(keys.map((k: { prefix: string }) => k.prefix).sort()).toEqual([a.key.slice(0, 8), second.key.slice(0, 8)].sort());
    expect(JSON.stringify(listed.body)).not.toContain(a.key);
    expect(JSON.stringify(listed.body)).not.toMatch(/[0-9a-f]{64}/);
    // the key used for the request is marked used; the other one not yet
    expect(keys.find((k: { id: string }) => k.id === second.key_id).last_used).toBeNull();
    expect(keys.find((k: { id: string }) => k.id !== second.key_id).last_used).toEqual(expect.any(String));
    // kept as a row of a table of its own (query() reads tables only), not a shared document
    const used = await api.engine.readModels.query<{ at: string }>("api_key_last_used", { where: { key: keys.find((k: { id: string }) => k.id !== second.key_id).id }, order: ["key"], direction: "asc", limit: 1 });
    expect(used).toEqual([{ at: keys.find((k: { id: string }) => k.id !== second.key_id).last_used }]);

    expectProblem(await b.get(`/v2/api_keys?external_account_id=${a.account}`), 403, "account_forbidden", "external_account_id");
    const theirs = await api.request("DELETE", `/v2/api_keys/${second.key_id}?external_account_id=${b.account}`, { key: b.key });
    expectProblem(theirs, 404, "resource_missing", "key_id");
    expect((await api.request("GET", `/v2/account`, { key: second.key })).status).toBe(200);

    const before = (await api.store.readAll()).length;
    const revoked = await api.request("DELETE", `/v2/api_keys/${second.key_id}?external_account_id=${a.account}`, { key: a.key });
    expect(revoked.status).toBe(200);
    // the answer shows the key as the list does, its last use included (it was used just above)
    expect(expectShape(ApiKeyOut, revoked.body)).toMatchObject({ id: second.key_id, status: "revoked", revoked_at: expect.any(String), last_used: expect.any(String) });
    // at once in the process that revoked it: no trust window of its own cache
    expect((await api.request("GET", `/v2/account`, { key: second.key })).status).toBe(401);
    // one event: the revocation (use of keys writes none)
    const after = await api.store.readAll();
    expect(after.slice(before).map((e) => e.type)).toEqual(["ApiKeyRevoked"]);
    // revoking again changes nothing
    expect((await api.request("DELETE", `/v2/api_keys/${second.key_id}?external_account_id=${a.account}`, { key: a.key })).body.status).toBe("revoked");
    expect((await api.store.readAll()).length).toBe(after.length);
  });

  it("a key issued with an expiry works until it, then 401; a past expiry is refused", async () => {
    const m = await api.merchant("acct_keys_exp");
    const apiKeys = createApiKeys(api.engine);
    const expiring = await apiKeys.issue(m.account, "test", { expiresAt: new Date(api.clock.now() + 60_000).toISOString() });
    expect((await api.request("GET", "/v2/account", { key: expiring.key })).status).toBe(200);
    await api.clock.advance(61_000);
    expect((await api.request("GET", "/v2/account", { key: expiring.key })).status).toBe(401);
    expect((await m.get(`/v2/api_keys?external_account_id=${m.account}`)).body.data.find((k: { id: string }) => k.id === expiring.key_id)).toMatchObject({ status: "expired" });
    await expect(apiKeys.issue(m.account, "test", { expiresAt: new Date(api.clock.now() - 1).toISOString() })).rejects.toMatchObject({ status: 400, param: "expires_at" });
  });

  it("a key rotated near its expiry is replaced by a key of the same lifetime from now, not one that dies with it; or by the expiry asked", async () => {
    const m = await api.merchant("acct_keys_rot");
    const apiKeys = createApiKeys(api.engine);
    const old = await apiKeys.issue(m.account, "test", { expiresAt: new Date(api.clock.now() + 60_000).toISOString() });
    await api.clock.advance(50_000);
    const rotatedAt = api.clock.now();
    const next = await apiKeys.rotate(old.key_id, { graceMs: 5_000 });
    await api.clock.advance(20_000);
    expect((await api.request("GET", "/v2/account", { key: old.key })).status).toBe(401);
    expect((await api.request("GET", "/v2/account", { key: next.key })).status).toBe(200);
    const listed = (await m.get(`/v2/api_keys?external_account_id=${m.account}`)).body.data;
    const expiry = (id: string) => listed.find((k: { id: string }) => k.id === id).expires_at;
    expect(Date.parse(expiry(old.key_id))).toBe(rotatedAt + 5_000); // the grace's end
    expect(Date.parse(expiry(next.key_id))).toBe(rotatedAt + 60_000);
    await api.clock.advance(40_000);
    expect((await api.request("GET", "/v2/account", { key: next.key })).status).toBe(401);
    // a key is rotated once: again (it said a grace the first rotation had already ended) or once expired, refused, nothing issued
    const keysBefore = (await apiKeys.list(m.account)).length;
    await expect(apiKeys.rotate(old.key_id, { graceMs: 3_600_000 })).rejects.toMatchObject({ code: "api_key_rotated", param: "key_id", message: expect.stringContaining(next.key_id) });
    await expect(apiKeys.rotate(next.key_id)).rejects.toMatchObject({ code: "api_key_expired", param: "key_id" });
    expect((await apiKeys.list(m.account)).length).toBe(keysBefore);

    const asked = await apiKeys.rotate((await apiKeys.issue(m.account, "test")).key_id, { expiresAt: new Date(api.clock.now() + 1_000).toISOString() });
    expect((await apiKeys.list(m.account)).find((k) => k.id === asked.key_id)!.expires_at).toBe(new Date(api.clock.now() + 1_000).toISOString().replace("Z", "+00:00"));
  });
});
