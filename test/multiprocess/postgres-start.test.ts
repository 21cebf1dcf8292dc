// `DATABASE_URL=postgres://… npm start` and the CLI on PostgreSQL, as real processes: three
// servers started at once on an empty schema apply the migrations exactly once, `cardflow accounts
// create` opens the account there, every server serves it, and `cardflow events export` reads the
// same events (from DATABASE_URL, and from --store postgres:URL).
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { testDatabase } from "../support/postgres.js";
import { client, startServer } from "./servers.js";
import { loadMigrations } from "../../src/store/migrations.js";

const database = await testDatabase();
const CLI = fileURLToPath(new URL("../../bin/cardflow.js", import.meta.url));

async function cardflow(env: Record<string, string>, ...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, ...args], { env: { ...process.env, DATA_DIR: "", DATABASE_URL: "", CARDFLOW_STORE: "", ...env } });
  return stdout;
}

describe("PostgreSQL from npm start and the CLI", () => {
  it("servers started together migrate once; the CLI and every server share the database", { timeout: 240_000 }, async () => {
    const schema = `t_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const env = { DATABASE_URL: database, DATABASE_SCHEMA: schema };
    const servers = await Promise.all([0, 1, 2].map(() => startServer(env)));
    try {
      const admin = new pg.Client({ connectionString: database });
      await admin.connect();
      const { rows } = await admin.query(`SELECT version FROM ${schema}.migrations ORDER BY version`);
      await admin.end();
      expect(rows).toEqual(loadMigrations(new URL("../../src/store/postgres/migrations/", import.meta.url)).map(({ version }) => ({ version })));

      const key = (await cardflow(env, "accounts", "create", "acct_pg")).trim();
      expect(key).toMatch(/^sk_/);
      const http = client(key);
      const intent = { external_account_id: "acct_pg", amount: "3.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_pg" };
      const created = await Promise.all(servers.map((s) => http.post(s.url, "/v2/payment/intent", intent)));
      expect(created.map((a) => a.status)).toEqual([200, 200, 200]);

      const createdIn = (jsonl: string) => jsonl.split("\n").filter((l) => l.includes('"PaymentIntentCreated"')).length;
      expect(createdIn(await cardflow(env, "events", "export"))).toBe(3);
      expect(createdIn(await cardflow({ DATABASE_SCHEMA: schema }, "events", "export", "--store", `postgres:${database}`))).toBe(3);
    } finally {
      expect(await Promise.all(servers.map((s) => s.stop()))).toEqual([0, 0, 0]);
    }
  });
});
