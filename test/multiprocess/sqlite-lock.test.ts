// Another process holds the SQLite write lock (a backup, a second server, a stuck script): an
// `npm start` process on the same file keeps answering what needs no write (/healthz, reads), and
// a write waits up to SQLITE_BUSY_TIMEOUT_MS without freezing the process, then gets 503
// problem+json with Retry-After; once the lock is released, writes succeed again.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { client, merchantKey, startServer, type StoreEnv } from "./servers.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-sqlite-lock-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ACCOUNT = "acct_lock";

/** A separate process that takes the write lock of the file and holds it until killed. */
async function holdWriteLock(path: string) {
  const script = `const D = require(${JSON.stringify(createRequire(import.meta.url).resolve("better-sqlite3"))}); const db = new D(${JSON.stringify(path)}); db.exec("BEGIN IMMEDIATE"); console.log("locked"); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", (line) => (line === "locked" ? resolve() : reject(new Error(line))));
    child.once("exit", (code) => reject(new Error(`lock holder exited ${code}`)));
  });
  return {
    release: () => new Promise<void>((resolve) => (child.once("exit", () => resolve()), child.kill("SIGKILL"))),
  };
}

describe("another process holds the SQLite write lock", () => {
  it("writes are refused with 503 after the bound, the process stays responsive, and writes resume after the lock is released", { timeout: 240_000 }, async () => {
    const store: StoreEnv = { DATA_DIR: dir };
    const key = await merchantKey(store, ACCOUNT);
    const server = await startServer(store, { SQLITE_BUSY_TIMEOUT_MS: "1500" });
    const http = client(key);
    const intent = { external_account_id: ACCOUNT, amount: "2.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_l" };
    try {
      const before = await http.post(server.url, "/v2/payment/intent", intent);
      expect(before.status).toBe(200);

      const lock = await holdWriteLock(join(dir, "cardflow.sqlite"));
      const started = Date.now();
      const write = http.post(server.url, "/v2/payment/intent", intent);
      // while the write waits for the lock, the process answers
      await new Promise((r) => setTimeout(r, 300));
      const health = await fetch(`${server.url}/healthz`);
      const read = await fetch(`${server.url}/v2/payment/intent/${before.body.payment_id}?external_account_id=${ACCOUNT}`, { headers: { authorization: `Bearer ${key}` } });
      const answeredWhileWaiting = Date.now();
      const refused = await write;
      const refusedAt = Date.now();
      expect(health.status).toBe(200);
      expect(read.status).toBe(200);
      expect(answeredWhileWaiting).toBeLessThan(refused.at);
      expect(refused.status).toBe(503);
      expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect([refused.body.code, refused.headers.get("retry-after")]).toEqual(["store_unavailable", "1"]);
      console.log(`[figures] SQLite write lock held by another process: health and read answered while a write waited; the write got 503 after ${refusedAt - started} ms (bound 1500 ms)`);

      await lock.release();
      const after = await http.post(server.url, "/v2/payment/intent", intent);
      expect(after.status).toBe(200);
      expect(server.child.exitCode).toBeNull();
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
