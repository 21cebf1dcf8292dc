// PostgreSQL keeps its connections open but does not answer: a real `npm start` process on its own
// embedded PostgreSQL.
// - Frozen (SIGSTOP to the postmaster and every backend: TCP stays up, nothing answers): a create
//   and a list each answer 503 store_unavailable (problem+json, Retry-After: 1) within seconds,
//   not after the freeze; once thawed the process serves again without a restart, the create's
//   retry with its Idempotency-Key gets its payment, and every acknowledged payment is stored
//   once. Before the fix every request hung for the whole freeze (no statement had a bound).
// - A lock held by another session on the read models' checkpoints: a list answers 503 within
//   seconds instead of waiting for the lock (it waited as long as the lock was held).
// - An Idempotency-Key claimed while the database is frozen: the claim's statement waits in the
//   frozen backend and runs when it resumes, after the request answered 503; the process releases
//   the claim by its token once the database answers (here on a new connection, made after the
//   thaw), and again if the claim ran after that release, so the retry runs (it was held 409 for
//   the whole 180 s lease).
// - A stop (SIGTERM) while the database is frozen exits 1 at its deadline, naming what it waited for.
// - The append signal's LISTEN connection (src/store/postgres/signal.ts) finds the frozen server
//   and connects again (it kept the frozen connection for ever), and still wakes another store
//   handle's subscriber whose poll would take ten minutes.
// The ceilings are generous (the bound is 5 s); each fault lasts longer than its ceiling.
import { afterAll, describe, expect, it } from "vitest";
import pg from "pg";
import { randomUUID } from "node:crypto";
import { systemClock } from "../../src/clock.js";
import { createIdempotency } from "../../src/idempotency.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { StoreUnavailable } from "../../src/store/port.js";
import { SIGNAL_APPLICATION_NAME } from "../../src/store/postgres/signal.js";
import { collect } from "../store/contract.js";
import { freezePostgres, startPostgres } from "../support/postgres.js";
import { client, freshSchema, merchantKey, startServer, storedEvents, type Answer, type StoreEnv } from "./servers.js";

const postgres = await startPostgres();
afterAll(() => postgres.stop());

const CEILING_MS = 15_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const intent = (account: string) => ({ external_account_id: account, amount: "4.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_f" });

/** GET with the key, answered (status 0: no answer within 25 s), and how long it took. */
async function get(url: string, key: string): Promise<Answer & { ms: number }> {
  const started = Date.now();
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(25_000) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, requestId: res.headers.get("request-id"), headers: res.headers, at: Date.now(), ms: Date.now() - started };
  } catch (error) {
    return { status: 0, body: { error: String(error) }, requestId: null, headers: new Headers(), at: Date.now(), ms: Date.now() - started };
  }
}

/** A 503 the client is told to retry in 1 s, within the ceiling. */
function expectUnavailable(answer: Answer & { ms: number }, codes: string[]) {
  expect([answer.status, answer.headers.get("retry-after")], JSON.stringify(answer.body)).toEqual([503, "1"]);
  expect(codes).toContain(answer.body.code);
  expect(answer.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(answer.ms).toBeLessThan(CEILING_MS);
}

describe("PostgreSQL connected but not answering", () => {
  it("frozen: a write and a list answer 503 store_unavailable within seconds; thawed, the process serves again and nothing acknowledged is lost or doubled", { timeout: 180_000 }, async () => {
    const account = "acct_frozen";
    const store: StoreEnv = { DATABASE_URL: postgres.url, DATABASE_SCHEMA: freshSchema() };
    const key = await merchantKey(store, account);
    const server = await startServer(store);
    const http = client(key);
    const list = () => get(`${server.url}/v2/payments?external_account_id=${account}`, key);
    const create = async (idempotencyKey: string) => {
      const started = Date.now();
      const answer = await http.post(server.url, "/v2/payment/intent", intent(account), { "idempotency-key": idempotencyKey });
      return { ...answer, ms: Date.now() - started };
    };
    try {
      const before = await create("k0");
      expect(before.status).toBe(200);
      expect((await list()).status).toBe(200);

      const thaw = await freezePostgres(postgres.url);
      let frozen: [Answer & { ms: number }, Answer & { ms: number }];
      try {
        frozen = await Promise.all([create("k1"), list()]);
      } finally {
        thaw();
      }
      const [write, read] = frozen;
      console.log(`[figures] PostgreSQL frozen: a create answered ${write.status} ${write.body?.code} after ${write.ms} ms, a list ${read.status} ${read.body?.code} after ${read.ms} ms`);
      expectUnavailable(write, ["store_unavailable"]);
      expectUnavailable(read, ["store_unavailable"]);

      // thawed: the same process serves again. The 503's retry (same key) gets its one payment
      // within seconds (409 meanwhile): a claim sent to the frozen backend runs when it resumes,
      // perhaps after its release on another backend, which then releases it again
      let retried = await create("k1");
      for (const until = Date.now() + 15_000; retried.status !== 200 && Date.now() < until; retried = await create("k1")) await sleep(500);
      expect(retried.status, JSON.stringify(retried.body)).toBe(200);
      const after = await create("k2");
      expect(after.status).toBe(200);
      const acknowledged = [before, after, retried].map((a) => a.body.payment_id as string);
      const listed = await list();
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((p: { payment_id: string }) => p.payment_id)).toEqual(expect.arrayContaining(acknowledged));

      const created = (await storedEvents(store)).filter((e) => e.type === "PaymentIntentCreated").map((e) => (e.data as { payment_id: string }).payment_id);
      expect(created.sort()).toEqual([...new Set(acknowledged)].sort()); // each acknowledged payment stored, once; nothing else
      expect(server.child.exitCode).toBeNull();
    } finally {
      const code = await server.stop();
      if (code !== 0) console.error(server.output());
      expect(code).toBe(0);
    }
  });

  it("frozen at the stop: SIGTERM exits 1 at SHUTDOWN_DEADLINE_MS, its last line naming what the stop was waiting for", { timeout: 120_000 }, async () => {
    const store: StoreEnv = { DATABASE_URL: postgres.url, DATABASE_SCHEMA: freshSchema() };
    const server = await startServer(store, { SHUTDOWN_DEADLINE_MS: "4000" });
    const thaw = await freezePostgres(postgres.url);
    try {
      const started = Date.now();
      const code = await server.stop();
      expect(code, server.output()).toBe(1);
      expect(Date.now() - started).toBeLessThan(CEILING_MS);
      const line = server.output().split("\n").find((l) => l.includes("shutdown deadline passed"));
      expect(JSON.parse(line ?? "null"), server.output()).toMatchObject({ step: expect.stringMatching(/^(closing the event store|closing the read models|the projections' catch-up under way|the reconciler's pass under way|stopping the webhook delivery)$/) });
    } finally {
      thaw();
    }
  });

  it("the checkpoints locked by another session: a list answers 503 within seconds, then lists again once the lock is released", { timeout: 120_000 }, async () => {
    const account = "acct_locked";
    const schema = freshSchema();
    const store: StoreEnv = { DATABASE_URL: postgres.url, DATABASE_SCHEMA: schema };
    const key = await merchantKey(store, account);
    const server = await startServer(store);
    const list = () => get(`${server.url}/v2/payments?external_account_id=${account}`, key);
    const locker = new pg.Client({ connectionString: postgres.url });
    await locker.connect();
    try {
      expect((await client(key).post(server.url, "/v2/payment/intent", intent(account))).status).toBe(200);
      expect((await list()).status).toBe(200);

      await locker.query(`BEGIN; LOCK TABLE ${schema}.checkpoints IN ACCESS EXCLUSIVE MODE`);
      // held 20 s, or until the list answered
      const released = sleep(20_000);
      const locked = await Promise.race([list(), released.then(() => null)]);
      await locker.query("ROLLBACK");
      console.log(`[figures] checkpoints locked: a list answered ${locked?.status} ${locked?.body?.code} after ${locked?.ms} ms`);
      expect(locked).not.toBeNull();
      expectUnavailable(locked!, ["store_unavailable", "read_model_behind"]);

      let again = await list();
      for (const until = Date.now() + 30_000; again.status !== 200 && Date.now() < until; again = await list()) await sleep(500);
      expect(again.status).toBe(200);
      expect(again.body.data).toHaveLength(1);
    } finally {
      await locker.end();
      const code = await server.stop();
      if (code !== 0) console.error(server.output());
      expect(code).toBe(0);
    }
  });

  it("frozen: the append signal's listening connection is dropped and made again, and wakes another handle's subscriber", { timeout: 120_000 }, async () => {
    const schema = freshSchema();
    const signalPids = async () => {
      const c = new pg.Client({ connectionString: postgres.url });
      await c.connect();
      try {
        return (await c.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()", [SIGNAL_APPLICATION_NAME])).rows.map((r) => r.pid);
      } finally {
        await c.end();
      }
    };
    const a = await createPostgresStore({ connectionString: postgres.url, schema, pollMs: 600_000 });
    const b = await createPostgresStore({ connectionString: postgres.url, schema, pollMs: 600_000 });
    const live = collect(b.events, {});
    try {
      for (let i = 0; i < 200 && (await signalPids()).length < 2; i++) await sleep(25);
      const before = await signalPids();
      expect(before).toHaveLength(2);
      const thaw = await freezePostgres(postgres.url);
      try {
        await sleep(9_000); // past a "listening" (every 2 s) unanswered for 5 s
      } finally {
        thaw();
      }
      let after = await signalPids();
      for (let i = 0; i < 200 && (after.length < 2 || after.some((pid) => before.includes(pid))); i++) after = (await sleep(100), await signalPids());
      expect(after).toHaveLength(2);
      expect(after.filter((pid) => before.includes(pid))).toEqual([]); // both connected again
      await sleep(1_500); // past the grace of the new connections: each hears the other's words
      const appended = await a.events.append("s", [{ id: randomUUID(), type: "appended", version: 1, data: {}, metadata: { timestamp: "2025-01-02T03:04:05.000+00:00", request_id: 1, idempotency_key: null } }], { expectedRevision: "any" });
      await live.until(1); // no poll in this test's time: the notification delivers it
      expect(live.got.map((e) => e.position)).toEqual([appended.position]);
    } finally {
      await live.sub.close();
      await Promise.all([a.events.close(), a.readModels.close(), b.events.close(), b.readModels.close()]);
    }
  });

  it("frozen: a key claimed meanwhile (its claim run when the database resumes) is free for the retry once it answers", { timeout: 120_000 }, async () => {
    const { events, readModels } = await createPostgresStore({ connectionString: postgres.url, schema: freshSchema() });
    const idempotency = createIdempotency({ store: events, clock: systemClock });
    const request = { scope: "acct_claim", key: "k1", fingerprint: "f" };
    let runs = 0;
    const execute = async () => ({ run: ++runs });
    try {
      await events.head(); // an idle connection in the pool: the claim is sent to the frozen backend, not left waiting to connect
      const thaw = await freezePostgres(postgres.url);
      let failed: unknown;
      try {
        failed = await idempotency.run(request, execute).catch((error: unknown) => error);
      } finally {
        thaw();
      }
      expect(failed).toBeInstanceOf(StoreUnavailable);
      const started = Date.now();
      let retried = await idempotency.run(request, execute).catch((error: unknown) => error);
      while (retried instanceof Error && Date.now() - started < 20_000) retried = (await sleep(250), await idempotency.run(request, execute).catch((error: unknown) => error));
      expect(retried).toMatchObject({ status: 200, body: { run: 1 } }); // within seconds, not the lease's 180 s
      expect(runs).toBe(1);
    } finally {
      await Promise.all([events.close(), readModels.close()]);
    }
  });
});
