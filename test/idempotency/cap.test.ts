// The per-account cap of Idempotency-Key records: past it a new key is refused with 429 and has no
// effect (nothing appended, no record left), while a retry of a kept key still replays and another
// account is not affected; once records expire the account may use new keys again. On every store
// that counts (memory, SQLite, PostgreSQL), and over HTTP as problem+json with Retry-After.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { createIdempotency, fingerprintOf, IdempotencyKeysExhausted } from "../../src/idempotency.js";
import { sequentialIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createMemoryReadModels, createMemoryStore } from "../../src/store/memory/index.js";
import type { EventStore, ReadModelStore } from "../../src/store/port.js";
import { expectProblem, startApi } from "../http/harness.js";
import { openDurable } from "../store/processes/stores.js";
import { testDatabase } from "../support/postgres.js";
import type { CreateIntentRequest } from "../../src/inputs.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-cap-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const database = await testDatabase();
const STORES: Record<string, () => Promise<{ events: EventStore; readModels: ReadModelStore }>> = {
  memory: async () => ({ events: createMemoryStore(), readModels: createMemoryReadModels() }),
  sqlite: () => openDurable({ kind: "sqlite", path: join(dir, `${randomUUID()}.db`) }),
  postgres: () => openDurable({ kind: "postgres", url: database, schema: `t_${randomUUID().replaceAll("-", "").slice(0, 12)}` }),
};
const input = (account: string): CreateIntentRequest => ({ external_account_id: account, amount: "5.00", payment_method_types: "card", capture_method: "manual" });

/** An engine on a fresh store of this kind with these accounts open, its manual clock: given to `body`, closed after. */
async function withEngine(kind: string, accounts: string[], body: (t: { events: EventStore; clock: ReturnType<typeof manualClock>; engine: ReturnType<typeof createEngine> }) => Promise<void>) {
  const { events, readModels } = await STORES[kind]!();
  const clock = manualClock();
  const ids = sequentialIds();
  const engine = createEngine({ store: events, readModels, clock, ids, processors: createSimulators({ clock, ids }) });
  try {
    for (const account of accounts) await engine.openAccount({ external_account_id: account });
    await body({ events, clock, engine });
  } finally {
    await engine.close();
  }
}

describe.each(Object.keys(STORES))("Idempotency-Key cap per account, on the %s store", (kind) => {
  it("refuses a new key past the cap (429, no effect), replays kept keys, leaves other accounts alone, frees up on expiry", async () => {
    await withEngine(kind, ["acct_full", "acct_other", "acct_full:x", "acct_full%3Ax"], async ({ events, clock, engine }) => {
      const idempotency = createIdempotency({ store: events, clock, ttlMs: 60_000, maxKeysPerScope: 3, recountMs: 0 });
      const run = (account: string, key: string) => idempotency.run({ scope: account, key, fingerprint: fingerprintOf("create", input(account)) }, (ctx) => engine.createIntent(input(account), ctx));
      const created = async () => (await events.readAll()).filter((e) => e.type === "PaymentIntentCreated").length;

      const first = await run("acct_full", "k1");
      await clock.advance(20_000);
      await run("acct_full", "k2");
      await run("acct_full", "k3");
      await expect(run("acct_full", "k4")).rejects.toBeInstanceOf(IdempotencyKeysExhausted);
      // Retry-After: when the first record (k1, kept 60 s) gives its key up, 40 s from now
      await expect(run("acct_full", "k4")).rejects.toMatchObject({ status: 429, code: "idempotency_keys_exhausted", retryAfterSeconds: 40 });
      expect(Date.parse((await events.nextIdempotencyRelease!("acct_full", new Date(clock.now()).toISOString()))!)).toBe(clock.now() + 40_000);
      expect(await created()).toBe(3);
      expect(await events.readIdempotency("acct_full:k4")).toBeUndefined();
      expect(await events.countIdempotency!("acct_full", new Date(clock.now()).toISOString())).toBe(3);
      // a retry of a kept key replays; another account has its own count
      expect(await run("acct_full", "k1")).toEqual({ ...first, replayed: true });
      expect((await run("acct_other", "k1")).replayed).toBe(false);
      // an account whose id extends another's with ":" has keys of its own: its "k1" is not acct_full's
      // "x:k1" (a probe's 422 idempotency_key_reused across tenants), nor counted against acct_full's cap
      expect((await run("acct_full:x", "k1")).replayed).toBe(false);
      await expect(run("acct_full", "x:k1")).rejects.toBeInstanceOf(IdempotencyKeysExhausted);
      expect(await events.countIdempotency!("acct_full", new Date(clock.now()).toISOString())).toBe(3);
      expect((await run("acct_full%3Ax", "k1")).replayed).toBe(false);
      // the records expire: the account may use new keys again
      await clock.advance(61_000);
      expect(await events.nextIdempotencyRelease!("acct_full", new Date(clock.now()).toISOString())).toBeNull();
      expect((await run("acct_full", "k4")).replayed).toBe(false);
      expect((await run("acct_full", "x:k1")).replayed).toBe(false);
      expect(await created()).toBe(8);
    });
  });
});

describe.each(Object.keys(STORES))("Idempotency-Key cap, first uses at once, on the %s store", (kind) => {
  it("takes exactly the cap of twelve new keys sent together, the claims still deciding not counted against each other", async () => {
    // a probe on PostgreSQL: twelve new keys at once on a fresh account, cap 5, gave 1 (one process) or 0 (three) accepted
    await withEngine(kind, ["acct_burst"], async ({ events, clock, engine }) => {
      const idempotency = createIdempotency({ store: events, clock, maxKeysPerScope: 5 });
      const run = (key: string) => idempotency.run({ scope: "acct_burst", key, fingerprint: fingerprintOf("create", input("acct_burst")) }, (ctx) => engine.createIntent(input("acct_burst"), ctx));
      const settled = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => run(`k${i}`)));
      expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(5);
      for (const s of settled) if (s.status === "rejected") expect(s.reason).toBeInstanceOf(IdempotencyKeysExhausted);
      expect(await events.countIdempotency!("acct_burst", new Date(clock.now()).toISOString())).toBe(5);
      await expect(run("k12")).rejects.toBeInstanceOf(IdempotencyKeysExhausted);
    });
  });

  it("a refused request's key is not remembered, nor counted: the next new key is taken while the account is under the cap", async () => {
    // a probe: four keys kept, a 404 under a fifth, then a new key refused 429 ("holds 5") with four in the store
    await withEngine(kind, ["acct_refused"], async ({ events, clock, engine }) => {
      const idempotency = createIdempotency({ store: events, clock, maxKeysPerScope: 5 });
      const run = (key: string, execute: () => Promise<unknown>) => idempotency.run({ scope: "acct_refused", key, fingerprint: fingerprintOf(key, {}) }, execute);
      for (let i = 0; i < 4; i++) await run(`k${i}`, () => engine.createIntent(input("acct_refused")));
      for (let i = 0; i < 3; i++) await expect(run(`missing${i}`, () => engine.capture({ external_account_id: "acct_refused", payment_id: "pi_missing", amount: "1.00" }))).rejects.toMatchObject({ status: 404 });
      expect((await run("k4", () => engine.createIntent(input("acct_refused")))).replayed).toBe(false);
      await expect(run("k5", () => engine.createIntent(input("acct_refused")))).rejects.toBeInstanceOf(IdempotencyKeysExhausted);
    });
  });
});

describe("Idempotency-Key cap, two processes on one store", () => {
  it("may be passed by the keys each took since its last count, and the 429 says 'at least' the cap, not a count it does not know", async () => {
    // a probe: two processes, cap 5, 7 records held, and the 429 said "this account holds 5 Idempotency-Key records"
    await withEngine("memory", ["acct_two"], async ({ events, clock, engine }) => {
      const [a, b] = [0, 1].map(() => createIdempotency({ store: events, clock, maxKeysPerScope: 5 }));
      const run = (process: typeof a, key: string) => process!.run({ scope: "acct_two", key, fingerprint: fingerprintOf("create", input("acct_two")) }, (ctx) => engine.createIntent(input("acct_two"), ctx));
      await run(a, "a0"); // a counts 0, then 1
      await run(b, "b0"); // b counts 1, then 2
      for (let i = 1; i <= 3; i++) await run(a, `a${i}`); // a: 4
      for (let i = 1; i <= 3; i++) await run(b, `b${i}`); // b: 5
      const refused = await run(b, "b4").catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(IdempotencyKeysExhausted);
      expect(await events.countIdempotency!("acct_two", new Date(clock.now()).toISOString())).toBe(8);
      expect((refused as Error).message).toMatch(/^this account holds at least 5 Idempotency-Key records, the most kept at once \(processes sharing the store may together pass it by the keys taken in 10 s\); retry in 86400 s/);
    });
  });
});

describe("the cap over HTTP", () => {
  it("is a 429 problem+json with Retry-After naming Idempotency-Key; requests without a key still run", async () => {
    const api = await startApi({ server: { idempotencyMaxKeysPerAccount: 2 } });
    try {
      const m = await api.merchant("acct_http_cap");
      const body = { amount: "5.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c" };
      expect((await m.post("/v2/payment/intent", body, { "idempotency-key": "a" })).status).toBe(200);
      expect((await m.post("/v2/payment/intent", body, { "idempotency-key": "b" })).status).toBe(200);
      const refused = await m.post("/v2/payment/intent", body, { "idempotency-key": "c" });
      expectProblem(refused, 429, "idempotency_keys_exhausted", "Idempotency-Key");
      // when the first key frees: kept 24 h (the default), and the clock has not moved
      expect(refused.headers.get("retry-after")).toBe(String(24 * 3600));
      expect(refused.body.detail).toContain(`retry in ${24 * 3600} s, when the first expires`);
      expect((await m.post("/v2/payment/intent", body, { "idempotency-key": "a" })).headers.get("idempotent-replayed")).toBe("true");
      expect((await m.post("/v2/payment/intent", body)).status).toBe(200);
    } finally {
      await api.close();
    }
  });
});
