// An engine command run under an idempotency key by a library caller (src/idempotency.ts, the same
// module the HTTP API uses): one effect per key, the first answer on retries, a key in use while
// its request runs, a crashed request's claim freed by its lease, a lost claim appending nothing.
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { createIdempotency, fingerprintOf, IdempotencyKeyInUse, IdempotencyKeyReused } from "../../src/idempotency.js";
import { sequentialIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import { StoreUnavailable } from "../../src/store/port.js";
import type { CreateIntentRequest } from "../../src/inputs.js";

const input: CreateIntentRequest = { external_account_id: "acct", amount: "5.00", payment_method_types: "card", capture_method: "manual" };

async function setup() {
  const clock = manualClock();
  const ids = sequentialIds();
  const store = createMemoryStore();
  const engine = createEngine({ store, clock, ids, processors: createSimulators({ clock, ids }) });
  await engine.openAccount({ external_account_id: "acct" });
  const idempotency = createIdempotency({ store, clock, leaseMs: 180_000 });
  const created = async () => (await store.readAll()).filter((e) => e.type === "PaymentIntentCreated").length;
  const request = (key: string, body: unknown = input) => ({ scope: "acct", key, fingerprint: fingerprintOf("createIntent", body) });
  return { clock, store, engine, idempotency, created, request };
}

describe("idempotency keys for library callers", () => {
  it("runs a command once per key: the retry gets the first answer; another request with the key is refused", async () => {
    const { engine, idempotency, created, request } = await setup();
    const first = await idempotency.run(request("order-1"), (ctx) => engine.createIntent(input, ctx));
    const again = await idempotency.run(request("order-1"), (ctx) => engine.createIntent(input, ctx));
    expect(first.replayed).toBe(false);
    expect(again).toEqual({ ...first, replayed: true });
    await expect(idempotency.run(request("order-1", { ...input, amount: "6.00" }), (ctx) => engine.createIntent({ ...input, amount: "6.00" }, ctx))).rejects.toBeInstanceOf(
      IdempotencyKeyReused,
    );
    expect(await created()).toBe(1);
  });

  it("a client secret's key recorded before 0.2.0 under its scope unescaped (client:<hash>:<key>) still replays, never runs again; an account's scope is never read unescaped", async () => {
    const { store, engine, idempotency, created, request } = await setup();
    const fingerprint = request("k").fingerprint;
    const done = { fingerprint, token: "old-process", state: "done" as const, status: 200, body: { kept: "first answer" }, expires_at: "2026-01-02T00:00:00.000Z" };
    for (const key of ["client:ff7a:ik-1", "acct:x:ik-2"]) {
      await store.claimIdempotency({ ...done, key, state: "in_flight", status: 0, body: null }, "2026-01-01T00:00:00.000Z");
      expect(await store.saveIdempotency({ ...done, key })).toBe(true);
    }
    const run = (scope: string, key: string) => idempotency.run({ scope, key, fingerprint }, (ctx) => engine.createIntent(input, ctx));
    expect(await run("client:ff7a", "ik-1")).toEqual({ status: 200, body: { kept: "first answer" }, replayed: true });
    expect(await created()).toBe(0);
    // an account "acct:x" (its keys escaped since): the unescaped record is another scope's, not read
    expect((await run("acct:x", "ik-2")).replayed).toBe(false);
    expect(await created()).toBe(1);
  });

  it("a record written under a request's former fingerprint (before an upgrade changed it) still replays; another fingerprint is still refused", async () => {
    const { engine, idempotency, created, request } = await setup();
    const old = request("order-2");
    const first = await idempotency.run(old, (ctx) => engine.createIntent(input, ctx));
    const upgraded = { ...old, fingerprint: fingerprintOf("createIntent v2", input), formerFingerprint: old.fingerprint };
    expect(await idempotency.run(upgraded, (ctx) => engine.createIntent(input, ctx))).toEqual({ ...first, replayed: true });
    const other = { ...old, fingerprint: fingerprintOf("createIntent v2", { ...input, amount: "6.00" }), formerFingerprint: fingerprintOf("createIntent", { ...input, amount: "6.00" }) };
    await expect(idempotency.run(other, (ctx) => engine.createIntent(input, ctx))).rejects.toBeInstanceOf(IdempotencyKeyReused);
    expect(await created()).toBe(1);
  });

  it("a request the store failed under frees its key once the store answers again, not at the lease's end: its retry runs", async () => {
    const { clock, engine, idempotency, created, request, store } = await setup();
    // the store is down for the request and its release, then back (a second later)
    let down = true;
    const releaseIdempotency = store.releaseIdempotency.bind(store);
    store.releaseIdempotency = async (...args) => (down ? Promise.reject(new StoreUnavailable("connection refused")) : releaseIdempotency(...args));
    await expect(idempotency.run(request("order-down"), async () => Promise.reject(new StoreUnavailable("connection refused")))).rejects.toBeInstanceOf(StoreUnavailable);
    // held by this process, freed as soon as the store answers: retried every second, however old
    await clock.advance(30_000);
    await expect(idempotency.run(request("order-down"), (ctx) => engine.createIntent(input, ctx))).rejects.toMatchObject({ status: 409, retryAfterSeconds: 1 });
    down = false;
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // real time: the release is tried again every second
    const retried = await idempotency.run(request("order-down"), (ctx) => engine.createIntent(input, ctx));
    expect([retried.replayed, await created()]).toEqual([false, 1]);
  });

  it("a claim whose statement failed with its outcome unknown, and which lands after its release (a frozen database resumed), is released again: the retry runs within seconds, not after the lease", async () => {
    const { engine, idempotency, created, request, store } = await setup();
    const claimIdempotency = store.claimIdempotency.bind(store);
    const releaseIdempotency = store.releaseIdempotency.bind(store);
    let landLate: (() => Promise<unknown>) | undefined;
    store.claimIdempotency = async (claim, now) => {
      if (landLate === undefined && claim.key === "acct:order-late") {
        landLate = () => claimIdempotency(claim, now); // sent, then unanswered: it runs later
        throw new StoreUnavailable("PostgreSQL did not answer in time");
      }
      return claimIdempotency(claim, now);
    };
    store.releaseIdempotency = async (...args) => {
      await releaseIdempotency(...args); // found nothing: the claim had not run yet
      await landLate?.(); // now it does
      landLate = async () => undefined;
    };
    await expect(idempotency.run(request("order-late"), (ctx) => engine.createIntent(input, ctx))).rejects.toBeInstanceOf(StoreUnavailable);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await store.readIdempotency("acct:order-late")).toMatchObject({ state: "in_flight" }); // landed after its release
    await expect(idempotency.run(request("order-late"), (ctx) => engine.createIntent(input, ctx))).rejects.toMatchObject({ status: 409, retryAfterSeconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // real time: looked at again a second after the release
    const retried = await idempotency.run(request("order-late"), (ctx) => engine.createIntent(input, ctx));
    expect([retried.replayed, await created()]).toEqual([false, 1]);
  });

  it("a sealKey that is not 32 bytes is refused at once, not after the command acted; an answer sealed under another process's key says which key", async () => {
    const { engine, store, clock, request } = await setup();
    for (const sealKey of [Buffer.alloc(16), Buffer.alloc(64), "x".repeat(32) as never]) expect(() => createIdempotency({ store, clock, sealKey })).toThrow(/createIdempotency: option sealKey must be a Buffer of 32 bytes/);
    await createIdempotency({ store, clock, sealKey: Buffer.alloc(32, 1) }).run(request("order-sealed"), (ctx) => engine.createIntent(input, ctx));
    await expect(createIdempotency({ store, clock }).run(request("order-sealed"), (ctx) => engine.createIntent(input, ctx))).rejects.toMatchObject({ code: "idempotency_answer_unreadable", message: expect.stringContaining("createIdempotency's sealKey differs, or was not given") });
  });

  it("a request the store failed under answers at once: its key's release, which the store would hold too (a database that does not answer), is not waited for", async () => {
    const { idempotency, request, store } = await setup();
    let releases = 0;
    store.releaseIdempotency = async () => (releases++, new Promise<void>(() => undefined)); // never answers
    const answered = idempotency.run(request("order-frozen"), async () => Promise.reject(new StoreUnavailable("PostgreSQL did not answer in time")));
    const outcome = await Promise.race([answered.then(() => "resolved", (e: unknown) => e), new Promise((resolve) => setTimeout(() => resolve("still waiting"), 500))]);
    expect(outcome).toBeInstanceOf(StoreUnavailable);
    expect(releases).toBe(1); // asked, and left to answer when it can
  });

  it("an answered request whose answer the store could not keep (it went away just then) has it kept once the store answers again: its retry replays", async () => {
    const { clock, engine, idempotency, created, request, store } = await setup();
    // the command acts, then the store is down when its answer is kept, and back a second later
    let down = false;
    const saveIdempotency = store.saveIdempotency.bind(store);
    store.saveIdempotency = async (...args) => (down ? Promise.reject(new StoreUnavailable("connection refused")) : saveIdempotency(...args));
    const first = await idempotency.run(request("order-kept"), async (ctx) => {
      const answer = await engine.createIntent(input, ctx);
      down = true;
      return answer;
    });
    // held by this process meanwhile: retried every second, however old
    await clock.advance(30_000);
    await expect(idempotency.run(request("order-kept"), (ctx) => engine.createIntent(input, ctx))).rejects.toMatchObject({ status: 409, retryAfterSeconds: 1 });
    down = false;
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // real time: the answer is written again every second
    const retried = await idempotency.run(request("order-kept"), (ctx) => engine.createIntent(input, ctx));
    expect([retried.replayed, retried.body, await created()]).toEqual([true, first.body, 1]);
  });

  it("records the answer with the command's events, so a retry after a crash replays it (after the lease)", async () => {
    const { clock, store, engine, idempotency, created, request } = await setup();
    // the "crashed" request: claimed the key, appended its events, never saved its final answer
    const claim = { key: "acct:crash", fingerprint: request("crash").fingerprint, token: "dead-process", state: "in_flight" as const, status: 0, body: null, expires_at: "2026-01-01T00:03:00.000+00:00" };
    expect(await store.claimIdempotency(claim, "2026-01-01T00:00:00.000+00:00")).toBeUndefined();
    const answer = await engine.createIntent(input, { idempotency_key: "crash", idempotency: (body) => ({ ...claim, status: 200, body }) });
    await expect(idempotency.run(request("crash"), (ctx) => engine.createIntent(input, ctx))).rejects.toBeInstanceOf(IdempotencyKeyInUse);
    await clock.advance(181_000);
    const retry = await idempotency.run(request("crash"), (ctx) => engine.createIntent(input, ctx));
    expect(retry).toEqual({ status: 200, body: answer, replayed: true });
    expect(await created()).toBe(1);
    expect(await store.readIdempotency("acct:crash")).toMatchObject({ state: "done", body: answer });
  });

  it("frees the key of a request that died before acting once its lease is over", async () => {
    const { clock, store, engine, idempotency, created, request } = await setup();
    await store.claimIdempotency({ key: "acct:early", fingerprint: request("early").fingerprint, token: "dead", state: "in_flight", status: 0, body: null, expires_at: "2026-01-01T00:03:00.000+00:00" }, "2026-01-01T00:00:00.000+00:00");
    await expect(idempotency.run(request("early"), (ctx) => engine.createIntent(input, ctx))).rejects.toMatchObject({ status: 409, retryAfterSeconds: 1 });
    await clock.advance(181_000);
    expect((await idempotency.run(request("early"), (ctx) => engine.createIntent(input, ctx))).replayed).toBe(false);
    expect(await created()).toBe(1);
  });

  it("a dead process's claim is retried after half its age (1 s while young), never past its lease's end, which the 409 names", async () => {
    const { clock, store, engine, idempotency, request } = await setup();
    // claimed at 00:00:00 by a process that was then SIGKILLed: the lease (180 s) ends at 00:03:00
    await store.claimIdempotency({ key: "acct:dead", fingerprint: request("dead").fingerprint, token: "killed", state: "in_flight", status: 0, body: null, expires_at: "2026-01-01T00:03:00.000+00:00" }, "2026-01-01T00:00:00.000+00:00");
    const retryAfter = async () => {
      const refused = await idempotency.run(request("dead"), (ctx) => engine.createIntent(input, ctx)).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(IdempotencyKeyInUse);
      expect((refused as IdempotencyKeyInUse).message).toContain("its claim ends by 2026-01-01T00:03:00.000+00:00 at the latest, if the request that holds it has stopped");
      return (refused as IdempotencyKeyInUse).retryAfterSeconds;
    };
    const seen: number[] = [];
    for (const at of [0, 4_000, 10_000, 60_000, 100_000, 170_000, 179_500, 180_000]) {
      await clock.advance(at - (clock.now() - Date.parse("2026-01-01T00:00:00.000Z")));
      seen.push(await retryAfter());
    }
    expect(seen).toEqual([1, 1, 5, 30, 50, 11, 1, 1]);
    await clock.advance(1);
    expect((await idempotency.run(request("dead"), (ctx) => engine.createIntent(input, ctx))).replayed).toBe(false);
  });

  it("a claim of a request still running in this process is retried every second, however old", async () => {
    const { clock, engine, idempotency, request } = await setup();
    let refused: unknown;
    await idempotency.run(request("long"), async (ctx) => {
      await clock.advance(100_000); // a blocking auth, say
      refused = await idempotency.run(request("long"), (c) => engine.createIntent(input, c)).catch((e: unknown) => e);
      return engine.createIntent(input, ctx);
    });
    expect(refused).toMatchObject({ status: 409, retryAfterSeconds: 1, message: expect.stringContaining("its claim ends by 2026-01-01T00:03:00.000+00:00 at the latest") });
  });

  it("a request that outlived its lease and lost its key appends nothing", async () => {
    const { clock, engine, idempotency, created, request } = await setup();
    let takeover: Promise<unknown> | undefined;
    const slow = idempotency.run(request("slow"), async (ctx) => {
      await clock.advance(181_000);
      takeover = idempotency.run(request("slow"), (c) => engine.createIntent(input, c));
      await takeover;
      return engine.createIntent(input, ctx);
    });
    await expect(slow).rejects.toBeInstanceOf(IdempotencyKeyInUse);
    expect(await takeover).toMatchObject({ replayed: false });
    expect(await created()).toBe(1);
  });

  it("a refused command leaves the key free for a corrected retry", async () => {
    const { engine, idempotency, created, request } = await setup();
    await expect(idempotency.run(request("fix"), (ctx) => engine.createIntent({ ...input, amount: "-1" }, ctx))).rejects.toMatchObject({ status: 400 });
    expect((await idempotency.run(request("fix"), (ctx) => engine.createIntent(input, ctx))).replayed).toBe(false);
    expect(await created()).toBe(1);
  });

  it("by default keeps an answer 24 h and a claim's lease 180 s (README: Idempotency-Key)", async () => {
    const { clock, store, engine, created, request } = await setup();
    const idempotency = createIdempotency({ store, clock });
    const run = (key: string) => idempotency.run(request(key), (ctx) => engine.createIntent(input, ctx));
    const first = await run("day");
    expect(first.body).toMatchObject({ status: "requires_payment_method", amount: "5.00" });
    await clock.advance(24 * 3_600_000);
    expect(await run("day")).toEqual({ ...first, replayed: true });
    await clock.advance(1);
    expect((await run("day")).replayed).toBe(false);
    expect(await created()).toBe(2);
    // purged once past their time: the record is gone
    await clock.advance(24 * 3_600_000 + 1);
    await idempotency.purge();
    expect(await store.readIdempotency("acct:day")).toBeUndefined();

    let inUse: unknown;
    let takeover: unknown;
    const slow = idempotency.run(request("lease"), async (ctx) => {
      await clock.advance(180_000);
      inUse = await run("lease").catch((e: unknown) => e);
      await clock.advance(1);
      takeover = await run("lease");
      return engine.createIntent(input, ctx);
    });
    await expect(slow).rejects.toBeInstanceOf(IdempotencyKeyInUse);
    expect(inUse).toBeInstanceOf(IdempotencyKeyInUse);
    expect(takeover).toMatchObject({ replayed: false });
    expect(await created()).toBe(3);
  });

  it("takes keys of 1 to 255 visible ASCII characters and refuses others with a 400 naming the header", async () => {
    const { engine, idempotency, request } = await setup();
    const run = (key: string) => idempotency.run(request(key), (ctx) => engine.createIntent(input, ctx));
    for (const key of ["", "k".repeat(256), "order 1", "clé", "tab\t"]) {
      await expect(run(key)).rejects.toMatchObject({ status: 400, code: "idempotency_key_invalid", param: "Idempotency-Key", message: expect.stringContaining("1 to 255 visible ASCII characters") });
    }
    for (const key of ["k".repeat(255), "!", "~order-1"]) expect((await run(key)).replayed).toBe(false);
  });
});
