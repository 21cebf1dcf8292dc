// API keys an operator manages, with real processes: two servers on one store (SQLite file;
// PostgreSQL), the `cardflow accounts` CLI as a third process. A key revoked by the CLI answers 401
// on both servers within a second; a key rotated with a grace keeps working on both until the
// grace ends while its replacement works at once; `accounts keys --json` lists them (id, prefix,
// status, created, last used, expiry; never the key or its digest).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { freshStores, merchantKey, startServer, type ServerProcess, type StoreEnv } from "./servers.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const stores = await freshStores("api-keys");

/** `cardflow ...args` on the store, as a process: its exit code and output. */
async function cardflow(store: StoreEnv, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const env = { ...process.env, DATABASE_URL: "", ...store } as Record<string, string>;
  const child = spawn(process.execPath, [`${ROOT}/bin/cardflow.js`, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { code, out, err };
}

const status = async (server: ServerProcess, key: string) => (await fetch(`${server.url}/v2/account`, { headers: { authorization: `Bearer ${key}` } })).status;

/** Polls until every server answers `expected` for the key; the time it took (ms). */
async function until(servers: ServerProcess[], key: string, expected: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const answers = await Promise.all(servers.map((s) => status(s, key)));
    if (answers.every((a) => a === expected)) return Date.now() - started;
    if (Date.now() - started > 10_000) throw new Error(`still ${answers.join(", ")} after 10 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.each(["sqlite", "postgres"] as const)("API keys across processes on one %s store", (kind) => {
  it("a revoked key answers 401 on every server within a second; a rotated key works until its grace ends", { timeout: 180_000 }, async () => {
    const store = stores[kind]();
    const key = await merchantKey(store, "acct_keys");
    const servers = await Promise.all([startServer(store), startServer(store)]);
    try {
      for (const server of servers) expect(await status(server, key)).toBe(200);
      const listed = await cardflow(store, "accounts", "keys", "acct_keys", "--json");
      expect(listed.code, listed.err).toBe(0);
      const [info] = JSON.parse(listed.out);
      expect(info).toEqual({
        id: expect.stringMatching(/^key_/),
        object: "api_key",
        external_account_id: "acct_keys",
        prefix: key.slice(0, 8),
        created: expect.any(String),
        expires_at: null,
        last_used: expect.any(String), // the servers used it just now
        status: "active",
        revoked_at: null,
        replaced_by: null,
      });
      expect(listed.out).not.toContain(key);

      // rotate with a grace: both keys work meanwhile, on both servers
      const rotated = await cardflow(store, "accounts", "rotate", info.id, "--grace", "4s");
      expect(rotated.code, rotated.err).toBe(0);
      const next = rotated.out.trim();
      expect(next).toMatch(/^sk_/);
      for (const server of servers) {
        expect(await status(server, next)).toBe(200);
        expect(await status(server, key)).toBe(200);
      }
      // after the grace the old one is refused everywhere
      await new Promise((r) => setTimeout(r, 4_000));
      expect(await until(servers, key, 401)).toBeLessThan(1_000);
      const afterRotation = JSON.parse((await cardflow(store, "accounts", "keys", "acct_keys", "--json")).out);
      expect(afterRotation.map((k: { status: string; replaced_by: string | null }) => [k.status, k.replaced_by])).toEqual([["active", null], ["expired", expect.stringMatching(/^key_/)]]);

      // revoke the new key: 401 on both servers within a second of the CLI's return
      const newId = afterRotation[0].id;
      const revoked = await cardflow(store, "accounts", "revoke", newId);
      expect(revoked.code, revoked.err).toBe(0);
      expect(await until(servers, next, 401)).toBeLessThan(1_000);
      // an unknown key id is a clear error, exit 2
      const unknown = await cardflow(store, "accounts", "revoke", "key_unknown");
      expect(unknown.code).toBe(2);
      expect(unknown.err).toContain("key_unknown");
    } finally {
      for (const server of servers) expect(await server.stop()).toBe(0);
    }
  });
});
