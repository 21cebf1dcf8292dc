// Reads that depend on earlier writes, across real `npm start` processes on one store: a write
// acknowledged by one process is in the other's next list (payments by several filters, terminals),
// without a global queue; and when the read models cannot move (their table or file locked for
// writes by someone else, still readable), every list answers 503 read_model_behind with
// Retry-After after its bound (never a stale list, and nothing appended) while the reads that
// need no read model (a status read, a charge with a sandbox test token) answer at once, and lists
// answer again once the lock is gone.
import Database from "better-sqlite3";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { client, freshStores, merchantKey, startServer, type ServerProcess, type StoreEnv } from "./servers.js";

const stores = await freshStores("ryw");

async function get(server: ServerProcess, key: string, path: string) {
  const res = await fetch(server.url + path, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(30_000) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

const charge = (i: number) => ({
  external_account_id: "acct_ryw",
  amount: "4.00",
  payment_method_types: "card",
  capture_method: "manual",
  payment_method_id: "pm_card_visa",
  external_customer_id: `cus_${i}`,
  external_payment_id: `ord-${i}`,
});

describe.each(["postgres", "sqlite"] as const)("two server processes on one %s store", (kind) => {
  it("a write acknowledged by one is in the other's next dependent read", { timeout: 180_000 }, async () => {
    const store = stores[kind]();
    const key = await merchantKey(store, "acct_ryw");
    const servers = await Promise.all([startServer(store), startServer(store)]);
    const http = client(key);
    try {
      for (let i = 0; i < 20; i++) {
        const [writer, reader] = i % 2 ? [servers[0]!, servers[1]!] : [servers[1]!, servers[0]!];
        const created = await http.post(writer.url, "/v2/payment/intent", charge(i));
        expect(created.status).toBe(200);
        const id = created.body.payment_id as string;
        const byId = await get(reader, key, `/v2/payments?external_account_id=acct_ryw&q=${id}`);
        expect(byId.body.data.map((p: { payment_id: string }) => p.payment_id)).toEqual([id]);
        const byCustomer = await get(reader, key, `/v2/payments?external_account_id=acct_ryw&external_customer_id=cus_${i}`);
        expect(byCustomer.body.data.map((p: { payment_id: string }) => p.payment_id)).toEqual([id]);
        // a change of status, acknowledged by the reader's peer, is in the reader's status filter
        expect((await http.post(writer.url, "/v2/payment/auth", { external_account_id: "acct_ryw", payment_id: id })).body.status).toBe("requires_capture");
        const authorized = await get(reader, key, `/v2/payments?external_account_id=acct_ryw&status=requires_capture&limit=100`);
        expect(authorized.body.data.map((p: { payment_id: string }) => p.payment_id)).toContain(id);
        const pending = await get(reader, key, `/v2/payments?external_account_id=acct_ryw&status=requires_payment_method&limit=100`);
        expect(pending.body.data.map((p: { payment_id: string }) => p.payment_id)).not.toContain(id);
        if (i % 5 === 0) {
          const terminal = await http.post(writer.url, "/v2/hardware", { external_account_id: "acct_ryw", terminal_type: "A_async" });
          const listed = await get(reader, key, `/v2/hardware?external_account_id=acct_ryw`);
          expect(listed.body.data.map((t: { terminal_id: string }) => t.terminal_id)).toContain(terminal.body.terminal_id);
        }
      }
      // every page of the whole list, through the other process, by cursor: each payment once
      const seen: string[] = [];
      for (let cursor: string | null = null, n = 0; n < 20; n++) {
        const page: Awaited<ReturnType<typeof get>> = await get(servers[n % 2]!, key, `/v2/payments?external_account_id=acct_ryw&limit=3${cursor ? `&cursor=${cursor}` : ""}`);
        seen.push(...page.body.data.map((p: { payment_id: string }) => p.payment_id));
        cursor = page.body.next_cursor;
        if (!page.body.has_more) break;
      }
      expect(new Set(seen).size).toBe(20);
    } finally {
      expect(await Promise.all(servers.map((s) => s.stop()))).toEqual([0, 0]);
    }
  });
});

/**
 * Holds the read models' write lock until released, leaving them readable: a list that did not
 * wait would answer from them, stale. PostgreSQL: the payments table locked EXCLUSIVE (reads
 * pass, the projector's commit waits); SQLite: their file's write lock.
 */
async function lockReadModels(store: StoreEnv): Promise<() => Promise<void>> {
  if ("DATABASE_URL" in store) {
    const c = new pg.Client({ connectionString: store.DATABASE_URL, options: `-c search_path=${store.DATABASE_SCHEMA}` });
    await c.connect();
    await c.query("BEGIN");
    await c.query("LOCK TABLE rm_payment_states_v4 IN EXCLUSIVE MODE");
    return async () => {
      await c.query("ROLLBACK");
      await c.end();
    };
  }
  const db = new Database(join(store.DATA_DIR, "cardflow.read-models.sqlite"));
  db.exec("BEGIN IMMEDIATE");
  return async () => {
    db.exec("ROLLBACK");
    db.close();
  };
}

/** The store's last event position, read beside the servers (not through a store handle: the read models are locked). */
async function head(store: StoreEnv): Promise<number> {
  if ("DATABASE_URL" in store) {
    const c = new pg.Client({ connectionString: store.DATABASE_URL, options: `-c search_path=${store.DATABASE_SCHEMA}` });
    await c.connect();
    try {
      return Number((await c.query<{ p: string }>("SELECT max(position) AS p FROM events")).rows[0]!.p);
    } finally {
      await c.end();
    }
  }
  const db = new Database(join(store.DATA_DIR, "cardflow.sqlite"), { readonly: true });
  try {
    return (db.prepare("SELECT max(position) FROM events").pluck().get() as number) ?? 0;
  } finally {
    db.close();
  }
}

describe.each(["postgres", "sqlite"] as const)("the projector cannot move (%s)", (kind) => {
  it("a list answers 503 read_model_behind with Retry-After, the reads that need no read model answer, and lists come back after", { timeout: 120_000 }, async () => {
    const store = stores[kind]();
    const key = await merchantKey(store, "acct_ryw");
    const server = await startServer(store);
    const http = client(key);
    try {
      const before = await http.post(server.url, "/v2/payment/intent", charge(0));
      expect((await get(server, key, `/v2/payments?external_account_id=acct_ryw`)).body.data).toHaveLength(1);
      const unlock = await lockReadModels(store);
      let unlocked = false;
      try {
        // needs no read model: a charge with a sandbox test token, a status read by id
        const created = await http.post(server.url, "/v2/payment/intent", charge(1));
        expect(created.status).toBe(200);
        // more than the two batches (100 events each) a SQLite server holds under way while their
        // commit waits for the lock: its reads answer those at once (src/store/port/under-way.ts)
        for (let i = 2; i <= 202; i++) expect((await http.post(server.url, "/v2/payment/intent", charge(i))).status).toBe(200);
        expect((await get(server, key, `/v2/payment/intent/${before.body.payment_id}?external_account_id=acct_ryw`)).status).toBe(200);
        const appended = await head(store);
        const behind = await get(server, key, `/v2/payments?external_account_id=acct_ryw`);
        expect(behind.status).toBe(503);
        expect(behind.headers.get("retry-after")).toBe("1");
        expect(behind.headers.get("content-type")).toMatch(/application\/problem\+json/);
        expect(behind.body).toMatchObject({ status: 503, code: "read_model_behind" });
        // it says how far behind: the read models stopped short of the write it must reflect
        expect(behind.body.applied_position).toBeLessThan(behind.body.needed_position);
        expect(behind.body.needed_position).toBeLessThanOrEqual(appended);
        // never a stale 200, whatever the filter or list, though the stale rows are readable
        for (const path of [`/v2/payments?external_account_id=acct_ryw&external_customer_id=cus_0`, `/v2/payments?external_account_id=acct_ryw&q=${before.body.payment_id}`, `/v2/hardware?external_account_id=acct_ryw`, `/v2/api_keys?external_account_id=acct_ryw`]) {
          const answer = await get(server, key, path);
          expect([path, answer.status, answer.body.code]).toEqual([path, 503, "read_model_behind"]);
        }
        // the refused reads appended nothing
        expect(await head(store)).toBe(appended);
        await unlock();
        unlocked = true;
        const after = await get(server, key, `/v2/payments?external_account_id=acct_ryw&q=${created.body.payment_id}`);
        expect(after.status).toBe(200);
        expect(after.body.data.map((p: { payment_id: string }) => p.payment_id)).toContain(created.body.payment_id);
      } finally {
        if (!unlocked) await unlock();
      }
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
