// The answers kept for Idempotency-Keys are sealed under a key derived from the webhook signing key.
// After the signing key changes (docs/OPERATIONS.md, key rotation), a retry of a key answered before
// is a 409 that says so, never a second effect and never a 500.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { client, merchantKey, startServer } from "./servers.js";

const root = mkdtempSync(join(tmpdir(), "cardflow-signing-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a retry after the webhook signing key changed", () => {
  it("is 409 idempotency_answer_unreadable, and nothing runs again", { timeout: 120_000 }, async () => {
    const store = { DATA_DIR: join(root, "data") };
    const key = await merchantKey(store, "acct_seal");
    const http = client(key);
    const create = (url: string) => http.post(url, "/v2/payment/intent", { external_account_id: "acct_seal", amount: "4.00", payment_method_types: "card_present", capture_method: "manual" }, { "idempotency-key": "rot-1" });
    let server = await startServer(store, { WEBHOOK_SIGNING_KEY: "11".repeat(32) });
    let first;
    try {
      first = await create(server.url);
      expect(first.status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    server = await startServer(store, { WEBHOOK_SIGNING_KEY: "22".repeat(32) });
    try {
      const again = await create(server.url);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ code: "idempotency_answer_unreadable", param: "Idempotency-Key" });
      expect(again.body.detail).toContain("WEBHOOK_SIGNING_KEY changed");
      const listed = await fetch(`${server.url}/v2/payments?external_account_id=acct_seal`, { headers: { authorization: `Bearer ${key}` } });
      expect(((await listed.json()) as { data: { payment_id: string }[] }).data.map((p) => p.payment_id)).toEqual([first.body.payment_id]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
