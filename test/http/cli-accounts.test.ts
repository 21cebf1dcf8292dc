// `cardflow accounts create|key`: prints only the new key; the key then works against the API.
import { Command } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import { registerAccounts } from "../../src/cli/accounts.js";
import { createEngine } from "../../src/engine.js";
import { createServer } from "../../src/http/server.js";
import { createMemoryReadModels } from "../../src/store/memory-read-models.js";
import { createMemoryStore } from "../../src/store/memory.js";

afterEach(() => {
  process.exitCode = undefined;
});

describe("cardflow accounts", () => {
  const store = createMemoryStore();
  const readModels = createMemoryReadModels();
  // the CLI closes what it opens; the shared in-memory store must outlive it
  const open = async () => ({ store: { ...store, close: async () => {} }, readModels: { ...readModels, close: async () => {} }, description: "memory" });

  async function cardflow(...args: string[]) {
    let out = "";
    let err = "";
    const program = new Command("cardflow").exitOverride();
    registerAccounts(program, { out: (t) => void (out += t), err: (t) => void (err += t), interactive: false }, open);
    process.exitCode = undefined;
    await program.parseAsync(args, { from: "user" });
    const code = process.exitCode ?? 0;
    process.exitCode = undefined;
    return { out, err, code };
  }

  it("create prints only the key, which then authenticates as that account", async () => {
    const created = await cardflow("accounts", "create", "acct_cli", "--processor", "B", "--currency", "EUR");
    expect(created).toMatchObject({ code: 0, err: "" });
    expect(created.out).toMatch(/^sk_[0-9A-Za-z]{32,}\n$/);
    const key = created.out.trim();

    const engine = createEngine({ store, readModels });
    const app = createServer({ engine });
    try {
      expect(await engine.getAccount("acct_cli")).toEqual({ external_account_id: "acct_cli", processor: "B", currency: "EUR" });
      const res = await app.inject({ method: "GET", url: "/v2/hardware?external_account_id=acct_cli", headers: { authorization: `Bearer ${key}` } });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ data: [] });

      const another = await cardflow("accounts", "key", "acct_cli");
      expect(another.code).toBe(0);
      expect(another.out.trim()).not.toBe(key);
      const again = await app.inject({ method: "GET", url: "/v2/hardware?external_account_id=acct_cli", headers: { authorization: `Bearer ${another.out.trim()}` } });
      expect(again.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it("refuses an account that exists, an unknown processor, a key for no account; stdout stays empty", async () => {
    await cardflow("accounts", "create", "acct_twice");
    const twice = await cardflow("accounts", "create", "acct_twice");
    expect(twice).toMatchObject({ code: 2, out: "" });
    expect(twice.err).toContain("already exists");
    const missing = await cardflow("accounts", "key", "acct_nobody");
    expect(missing).toMatchObject({ code: 2, out: "" });
    expect(missing.err).toContain("acct_nobody");
    await expect(cardflow("accounts", "create", "acct_c", "--processor", "C")).rejects.toThrow(/processor/);
  });
});
