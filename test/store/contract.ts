// The store contract: one suite of behaviours every EventStore / ReadModelStore adapter must pass.
// Each adapter's *.test.ts calls these with a fixture. A fixture is one logical store: with
// `durable: true`, open() may be called more than once to get several handles on the same data
// (two "processes" on one database) and the reopen cases are registered; the memory store has one
// handle, so for it those cases use that handle or are not registered at all.
// Positions are compared relative to each other, never to 1..n, because PostgreSQL sequences and
// KurrentDB commit positions leave gaps; every test uses its own stream names.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import {
  CheckpointConflict,
  IdempotencyClaimLost,
  WrongExpectedRevision,
  type EventData,
  type EventStore,
  type IdempotencyRecord,
  type ProjectionCommit,
  type ReadModelStore,
  type RecordedEvent,
  type SubscribeOptions,
} from "../../src/store/port.js";
import type { AppendResult } from "../../src/store/port/append.js";

/** Where an append placed its events: what a retry of it answers (a change mark, only the first's). */
export const placed = ({ nextRevision, position }: AppendResult) => ({ nextRevision, position });

export interface StoreFixture<S> {
  /** A handle on the fixture's store; when durable, every call opens a new handle on the same data. */
  open(): Promise<S>;
  dispose?(): Promise<void>;
}

export interface ContractOptions {
  /** Data outlives a handle and several handles can share it (SQLite, PostgreSQL, KurrentDB). */
  durable: boolean;
  /** Events in the large-stream case (default 10,000). */
  largeStream?: number;
}

export function event(type = "test.happened", data: unknown = {}, request_id = 1): EventData {
  return {
    id: randomUUID(),
    type,
    version: 1,
    data,
    metadata: { timestamp: "2025-01-02T03:04:05.000+00:00", request_id, idempotency_key: null },
  };
}

const events = (n: number, type = "test.happened") => Array.from({ length: n }, (_, i) => event(type, { i }));

/** The claim a request makes on `key` (in flight, no answer yet), with its own token. */
export function claimOf(key: string, expires_at = "2099-01-01T00:00:00.000Z", token = randomUUID()): IdempotencyRecord {
  return { key, fingerprint: `fp-${key}`, token, state: "in_flight", status: 0, body: null, expires_at };
}

/** The final answer replacing `claim`. */
export function idem(claim: IdempotencyRecord, expires_at = "2099-01-01T00:00:00.000Z"): IdempotencyRecord {
  return { ...claim, state: "done", status: 201, body: { payment_id: claim.key, nested: [1, "two", null] }, expires_at };
}

const NOW = "2030-01-01T00:00:00.000Z";

/** Collects events from a subscription; `until(n)` resolves once n events arrived. */
export function collect(store: EventStore, options: SubscribeOptions) {
  const got: RecordedEvent[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let active = 0;
  let overlapped = false;
  const sub = store.subscribeToAll(options, async (e) => {
    if (active++ > 0) overlapped = true;
    got.push(e);
    await Promise.resolve();
    active--;
    for (const w of waiters.filter((w) => got.length >= w.n)) w.resolve();
  });
  return {
    got,
    sub,
    get overlapped() {
      return overlapped;
    },
    until(n: number) {
      if (got.length >= n) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push({ n, resolve }));
    },
  };
}

const strip = ({ position: _p, revision: _r, stream: _s, ...data }: RecordedEvent): EventData => data;

function expectIncreasing(positions: number[]) {
  for (let i = 1; i < positions.length; i++) expect(positions[i]!).toBeGreaterThan(positions[i - 1]!);
}

/** Opens handles through a fixture and closes them after each test. */
export function harness<S extends { close(): Promise<void> }>(factory: () => Promise<StoreFixture<S>>) {
  let opened: S[] = [];
  let fixtures: StoreFixture<S>[] = [];
  afterEach(async () => {
    await Promise.all(opened.map((s) => s.close()));
    await Promise.all(fixtures.map((f) => f.dispose?.()));
    opened = [];
    fixtures = [];
  });
  return async () => {
    const fixture = await factory();
    fixtures.push(fixture);
    const open = async () => {
      const s = await fixture.open();
      opened.push(s);
      return s;
    };
    return { fixture, store: await open(), open };
  };
}

export function eventStoreContract(name: string, factory: () => Promise<StoreFixture<EventStore>>, options: ContractOptions) {
  const setup = harness(factory);
  const fresh = async () => (await setup()).store;
  const ns = () => `t${randomUUID().slice(0, 8)}-`;

  describe(`EventStore contract: ${name}`, () => {
    describe("append and expected revision", () => {
      it("appends to a new stream with no_stream and reads back exactly what was written", async () => {
        const store = await fresh();
        const s = `${ns()}pay`;
        const written = [event("a", { amount: "10.50", nested: { list: [1, 2], unicode: "café ☕ 支付" } }), event("b", null)];
        written[1]!.metadata = { timestamp: "2025-01-02T03:04:05.000+09:00", request_id: 42, idempotency_key: "k1", actor: "key_1", chain: "abc" };
        const result = await store.append(s, written, { expectedRevision: "no_stream" });
        expect(result.nextRevision).toBe(1);
        const read = await store.readStream(s);
        expect(read.map(strip)).toEqual(written);
        expect(read.map((e) => [e.stream, e.revision])).toEqual([[s, 0], [s, 1]]);
        expect(read[1]!.position).toBe(result.position);
        expect(read[1]!.position).toBeGreaterThan(read[0]!.position);
        expect(read[0]!.position).toBeGreaterThan(0);
      });

      it("appends with the exact last revision and returns the next one", async () => {
        const store = await fresh();
        const s = `${ns()}pay`;
        const first = await store.append(s, [event()], { expectedRevision: "no_stream" });
        const second = await store.append(s, events(2), { expectedRevision: 0 });
        expect(second.nextRevision).toBe(2);
        expect(second.position).toBeGreaterThan(first.position);
        expect((await store.readStream(s)).map((e) => e.revision)).toEqual([0, 1, 2]);
      });

      it.each<[string, (s: string, store: EventStore) => Promise<unknown>, EventData[], number | "no_stream" | "stream_exists", number]>([
        ["a stale exact revision", (s, store) => store.append(s, events(2), { expectedRevision: "no_stream" }), events(3), 0, 1],
        ["a revision ahead of the stream", (s, store) => store.append(s, events(1), { expectedRevision: "no_stream" }), events(1), 5, 0],
        ["no_stream on an existing stream", (s, store) => store.append(s, events(1), { expectedRevision: "no_stream" }), events(1), "no_stream", 0],
        ["stream_exists on a missing stream", async () => undefined, events(2), "stream_exists", -1],
        ["an exact revision on a missing stream", async () => undefined, events(1), 0, -1],
      ])("refuses %s with WrongExpectedRevision and appends nothing", async (_case, before, attempt, expected, actual) => {
        const store = await fresh();
        const s = `${ns()}pay`;
        await before(s, store);
        const streamBefore = await store.readStream(s);
        const allBefore = await store.readAll();
        const error = await store.append(s, attempt, { expectedRevision: expected }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(WrongExpectedRevision);
        expect(error).toMatchObject({ name: "WrongExpectedRevision", stream: s, expected, actual });
        expect(await store.readStream(s)).toEqual(streamBefore);
        expect(await store.readAll()).toEqual(allBefore);
      });

      it("accepts stream_exists on an existing stream and any in both cases", async () => {
        const store = await fresh();
        const s = `${ns()}pay`;
        await store.append(s, [event()], { expectedRevision: "any" });
        await store.append(s, [event()], { expectedRevision: "stream_exists" });
        const r = await store.append(s, [event()], { expectedRevision: "any" });
        expect(r.nextRevision).toBe(2);
      });

      it("lets exactly one of many concurrent appends with the same expected revision win", async () => {
        const { store, open } = await setup();
        const other = options.durable ? await open() : store;
        const s = `${ns()}pay`;
        await store.append(s, [event()], { expectedRevision: "no_stream" });
        const attempts = await Promise.allSettled(
          Array.from({ length: 12 }, (_, i) => (i % 2 ? other : store).append(s, [event("capture")], { expectedRevision: 0 })),
        );
        expect(attempts.filter((a) => a.status === "fulfilled")).toHaveLength(1);
        for (const a of attempts) if (a.status === "rejected") expect(a.reason).toBeInstanceOf(WrongExpectedRevision);
        expect((await store.readStream(s)).map((e) => e.type)).toEqual(["test.happened", "capture"]);
      });
    });

    describe("idempotent append by event id", () => {
      it("stores a retried append once and returns the original result", async () => {
        const store = await fresh();
        const s = `${ns()}pay`;
        const batch = events(3);
        const first = await store.append(s, batch, { expectedRevision: "no_stream" });
        const retry = await store.append(s, structuredClone(batch), { expectedRevision: "no_stream" });
        expect(retry).toEqual(placed(first));
        expect(await store.readStream(s)).toHaveLength(3);
        expect(await store.readAll()).toHaveLength(3);
      });

      it("recognises a retry even after the stream moved on", async () => {
        const store = await fresh();
        const s = `${ns()}pay`;
        const batch = [event("authorized")];
        const first = await store.append(s, batch, { expectedRevision: "no_stream" });
        await store.append(s, [event("captured")], { expectedRevision: 0 });
        expect(await store.append(s, batch, { expectedRevision: "no_stream" })).toEqual(placed(first));
        expect((await store.readStream(s)).map((e) => e.type)).toEqual(["authorized", "captured"]);
      });
    });

    describe("readStream", () => {
      it("reads forwards and backwards from a revision with maxCount", async () => {
        const store = await fresh();
        const s = `${ns()}pay`;
        await store.append(s, events(10), { expectedRevision: "no_stream" });
        const revs = (list: RecordedEvent[]) => list.map((e) => e.revision);
        expect(revs(await store.readStream(s, { fromRevision: 3, maxCount: 4 }))).toEqual([3, 4, 5, 6]);
        expect(revs(await store.readStream(s, { fromRevision: 8 }))).toEqual([8, 9]);
        expect(revs(await store.readStream(s, { direction: "backwards", maxCount: 3 }))).toEqual([9, 8, 7]);
        expect(revs(await store.readStream(s, { direction: "backwards", fromRevision: 2 }))).toEqual([2, 1, 0]);
        expect(revs(await store.readStream(s, { direction: "backwards", fromRevision: 5, maxCount: 2 }))).toEqual([5, 4]);
        expect(await store.readStream(s, { fromRevision: 10 })).toEqual([]);
      });

      it("returns an empty array for a stream that does not exist", async () => {
        const store = await fresh();
        expect(await store.readStream(`${ns()}missing`)).toEqual([]);
        expect(await store.readStream(`${ns()}missing`, { direction: "backwards" })).toEqual([]);
      });

      it("keeps streams apart, including streams whose names share a prefix", async () => {
        const store = await fresh();
        const p = ns();
        await store.append(`${p}pay_1`, events(2), { expectedRevision: "no_stream" });
        await store.append(`${p}pay_10`, events(3), { expectedRevision: "no_stream" });
        expect(await store.readStream(`${p}pay_1`)).toHaveLength(2);
        expect(await store.readStream(`${p}pay_10`)).toHaveLength(3);
      });
    });

    describe("readAll", () => {
      it("reads every stream in global order after a position, with maxCount", async () => {
        const store = await fresh();
        const p = ns();
        await store.append(`${p}a`, events(2), { expectedRevision: "no_stream" });
        await store.append(`${p}b`, events(1), { expectedRevision: "no_stream" });
        await store.append(`${p}a`, events(2), { expectedRevision: 1 });
        const all = await store.readAll();
        expect(all.map((e) => [e.stream, e.revision])).toEqual([[`${p}a`, 0], [`${p}a`, 1], [`${p}b`, 0], [`${p}a`, 2], [`${p}a`, 3]]);
        expectIncreasing(all.map((e) => e.position));
        expect(await store.readAll({ after: all[1]!.position })).toEqual(all.slice(2));
        expect(await store.readAll({ after: all[0]!.position, maxCount: 2 })).toEqual(all.slice(1, 3));
        expect(await store.readAll({ after: all[4]!.position })).toEqual([]);
        expect(all).toEqual((await store.readStream(`${p}a`)).concat(await store.readStream(`${p}b`)).sort((x, y) => x.position - y.position));
      });

      it("tells the head: the position of the last event committed, through any handle", async () => {
        const { store, open } = await setup();
        const p = ns();
        const before = await store.head();
        expect(before).toBe((await store.readAll()).at(-1)?.position ?? 0);
        const { position } = await store.append(`${p}a`, events(3), { expectedRevision: "no_stream" });
        expect(await store.head()).toBe(position);
        if (!options.durable) return;
        const other = await open();
        const second = await other.append(`${p}b`, events(1), { expectedRevision: "no_stream" });
        expect(second.position).toBeGreaterThan(position);
        expect(await store.head()).toBe(second.position);
      });
    });

    describe("catch-up subscription", () => {
      it("delivers stored events after the checkpoint, then live ones, exactly once and in order", async () => {
        const store = await fresh();
        const p = ns();
        await store.append(`${p}a`, events(3), { expectedRevision: "no_stream" });
        await store.append(`${p}b`, events(2), { expectedRevision: "no_stream" });
        const stored = await store.readAll();
        const c = collect(store, { after: stored[1]!.position });
        await c.until(3);
        await store.append(`${p}a`, events(2), { expectedRevision: 2 });
        await store.append(`${p}c`, events(1), { expectedRevision: "no_stream" });
        await c.until(6);
        const all = await store.readAll();
        expect(c.got).toEqual(all.slice(2));
        expect(c.overlapped).toBe(false);
        await c.sub.close();
        await store.append(`${p}a`, events(1), { expectedRevision: 4 });
        await store.readAll(); // give a closed subscription a chance to misbehave
        expect(c.got).toHaveLength(6);
      });

      it("filters by stream prefixes and still advances past other streams", async () => {
        const store = await fresh();
        const p = ns();
        await store.append(`${p}payment-1`, events(2), { expectedRevision: "no_stream" });
        await store.append(`${p}terminal-1`, events(2), { expectedRevision: "no_stream" });
        const c = collect(store, { streamPrefixes: [`${p}payment-`, `${p}card-`] });
        await store.append(`${p}card-1`, events(1), { expectedRevision: "no_stream" });
        await store.append(`${p}terminal-1`, events(1), { expectedRevision: 1 });
        await store.append(`${p}payment-2`, events(1), { expectedRevision: "no_stream" });
        await c.until(4);
        const all = await store.readAll();
        expect(c.got).toEqual(all.filter((e) => !e.stream.startsWith(`${p}terminal-`)));
      });

      it("sees appends made through another handle on the same store", async () => {
        const { store, open } = await setup();
        const writer = options.durable ? await open() : store;
        const c = collect(store, {});
        const r = await writer.append(`${ns()}x`, events(3), { expectedRevision: "no_stream" });
        await c.until(3);
        expect(c.got.at(-1)!.position).toBe(r.position);
      });

      it("stops delivering when the store closes", async () => {
        const { fixture } = await setup();
        const store = await fixture.open(); // closed by the test itself
        const c = collect(store, {});
        await store.append(`${ns()}x`, events(1), { expectedRevision: "no_stream" });
        await c.until(1);
        await store.close();
        await c.sub.close(); // closing again after the store closed is harmless
        expect(c.got).toHaveLength(1);
      });
    });

    describe("scale and concurrency", () => {
      it(`holds a large stream (${options.largeStream ?? 10_000} events) and delivers it whole`, async () => {
        const store = await fresh();
        const n = options.largeStream ?? 10_000;
        const s = `${ns()}big`;
        for (let i = 0; i < n; i += 1000) {
          await store.append(s, events(Math.min(1000, n - i)), { expectedRevision: i === 0 ? "no_stream" : i - 1 });
        }
        const read = await store.readStream(s);
        expect(read).toHaveLength(n);
        expect(read.every((e, i) => e.revision === i && (e.data as { i: number }).i === i % 1000)).toBe(true);
        expect((await store.readStream(s, { direction: "backwards", maxCount: 1 }))[0]!.revision).toBe(n - 1);
        expect((await store.readStream(s, { fromRevision: n - 5 })).map((e) => e.revision)).toEqual([n - 5, n - 4, n - 3, n - 2, n - 1]);
        const c = collect(store, {});
        await c.until(n);
        expect(c.got.map((e) => e.id)).toEqual(read.map((e) => e.id));
        expectIncreasing(c.got.map((e) => e.position));
      });

      it("gives subscribers every event of concurrent appenders on many streams exactly once, in position order", async () => {
        const { store, open } = await setup();
        const handles = options.durable ? [store, await open(), await open()] : [store];
        const p = ns();
        const live = collect(store, {});
        const streams = 24;
        const appendsPerStream = 15;
        const acknowledged: string[] = [];
        await Promise.all(
          Array.from({ length: streams }, async (_, s) => {
            const h = handles[s % handles.length]!;
            for (let i = 0; i < appendsPerStream; i++) {
              const batch = events(1 + (i % 3));
              await h.append(`${p}s${s}`, batch, { expectedRevision: i === 0 ? "no_stream" : "stream_exists" });
              acknowledged.push(...batch.map((e) => e.id));
            }
          }),
        );
        await live.until(acknowledged.length);
        const all = await store.readAll();
        expect(all).toHaveLength(acknowledged.length);
        expect(new Set(all.map((e) => e.id))).toEqual(new Set(acknowledged));
        expect(new Set(all.map((e) => e.position)).size).toBe(all.length);
        expectIncreasing(all.map((e) => e.position));
        expect(live.got).toEqual(all);
        for (let s = 0; s < streams; s++) {
          expect((await store.readStream(`${p}s${s}`)).map((e) => e.revision)).toEqual([...Array(all.filter((e) => e.stream === `${p}s${s}`).length).keys()]);
        }
        // A subscriber started afterwards from a mid checkpoint gets exactly the rest.
        const mid = all[Math.floor(all.length / 2)]!.position;
        const late = collect(handles.at(-1)!, { after: mid });
        await late.until(all.length - Math.floor(all.length / 2) - 1);
        expect(late.got).toEqual(all.filter((e) => e.position > mid));
      });
    });

    describe("idempotency records", () => {
      it("stores the answer in the same append as the events, replacing the request's claim", async () => {
        const store = await fresh();
        const claim = claimOf(`${ns()}acct:key-1`);
        expect(await store.claimIdempotency(claim, NOW)).toBeUndefined();
        expect(await store.readIdempotency(claim.key)).toEqual(claim);
        await store.append(`${ns()}pay`, events(1), { expectedRevision: "no_stream", idempotency: idem(claim) });
        expect(await store.readIdempotency(claim.key)).toEqual(idem(claim));
      });

      it("stores no record when the append is refused", async () => {
        const store = await fresh();
        const s = `${ns()}pay`;
        const claim = claimOf(`${ns()}acct:key-2`);
        await store.claimIdempotency(claim, NOW);
        await store.append(s, events(1), { expectedRevision: "no_stream" });
        await expect(store.append(s, events(1), { expectedRevision: "no_stream", idempotency: idem(claim) })).rejects.toBeInstanceOf(WrongExpectedRevision);
        expect(await store.readIdempotency(claim.key)).toEqual(claim);
      });

      it("refuses a second claimant: the holder is returned, whatever its state", async () => {
        const store = await fresh();
        const first = claimOf(`${ns()}k`);
        expect(await store.claimIdempotency(first, NOW)).toBeUndefined();
        expect(await store.claimIdempotency(claimOf(first.key), NOW)).toEqual(first);
        await store.saveIdempotency(idem(first));
        expect(await store.claimIdempotency(claimOf(first.key), NOW)).toEqual(idem(first));
      });

      it("lets exactly one of many concurrent claimants win, across handles", async () => {
        const { store, open } = await setup();
        const handles = options.durable ? [store, await open(), await open()] : [store];
        const key = `${ns()}race`;
        const claims = Array.from({ length: 12 }, () => claimOf(key));
        const results = await Promise.all(claims.map((c, i) => handles[i % handles.length]!.claimIdempotency(c, NOW)));
        const winners = claims.filter((_, i) => results[i] === undefined);
        expect(winners).toHaveLength(1);
        for (const r of results) if (r) expect(r).toEqual(winners[0]);
        expect(await store.readIdempotency(key)).toEqual(winners[0]);
      });

      it("replaces the claim only while it is the request's: another token appends nothing and saves nothing", async () => {
        const store = await fresh();
        const s = `${ns()}pay`;
        const claim = claimOf(`${ns()}k`);
        await store.claimIdempotency(claim, NOW);
        const stranger = { ...idem(claim), token: randomUUID() };
        await expect(store.append(s, events(2), { expectedRevision: "no_stream", idempotency: stranger })).rejects.toBeInstanceOf(IdempotencyClaimLost);
        expect(await store.readStream(s)).toEqual([]);
        expect(await store.saveIdempotency(stranger)).toBe(false);
        expect(await store.saveIdempotency(idem(claimOf(`${ns()}never-claimed`)))).toBe(false);
        expect(await store.readIdempotency(claim.key)).toEqual(claim);
        expect(await store.saveIdempotency(idem(claim))).toBe(true);
        expect(await store.readIdempotency(claim.key)).toEqual(idem(claim));
      });

      it("frees an expired claim without answer and an expired answer; keeps an expired claim whose events were appended", async () => {
        const store = await fresh();
        const past = "2020-01-01T00:00:00.000Z";
        const crashedEarly = claimOf(`${ns()}a`, past);
        const crashedAfterAppend = claimOf(`${ns()}b`, past);
        const answered = claimOf(`${ns()}c`);
        for (const c of [crashedEarly, crashedAfterAppend, answered]) await store.claimIdempotency(c, past);
        await store.append(`${ns()}pay`, events(1), { expectedRevision: "no_stream", idempotency: { ...crashedAfterAppend, status: 200, body: { ok: true } } });
        await store.saveIdempotency(idem(answered, past));

        const retryA = claimOf(crashedEarly.key);
        expect(await store.claimIdempotency(retryA, NOW)).toBeUndefined();
        expect(await store.claimIdempotency(claimOf(crashedAfterAppend.key), NOW)).toMatchObject({ token: crashedAfterAppend.token, status: 200, body: { ok: true } });
        expect(await store.claimIdempotency(claimOf(answered.key), NOW)).toBeUndefined();
        // the claim taken over is no longer the crashed request's
        expect(await store.saveIdempotency(idem(crashedEarly))).toBe(false);
        expect(await store.readIdempotency(crashedEarly.key)).toEqual(retryA);
      });

      it("releases a failed request's claim: deleted without answer, done with the answer recorded with its events", async () => {
        const store = await fresh();
        const none = claimOf(`${ns()}none`);
        const appended = claimOf(`${ns()}appended`);
        await store.claimIdempotency(none, NOW);
        await store.claimIdempotency(appended, NOW);
        await store.append(`${ns()}pay`, events(1), { expectedRevision: "no_stream", idempotency: { ...appended, status: 200, body: { n: 1 } } });
        await store.releaseIdempotency(none.key, randomUUID(), "2099-01-01T00:00:00.000Z"); // not its token: nothing happens
        expect(await store.readIdempotency(none.key)).toEqual(none);
        await store.releaseIdempotency(none.key, none.token, "2099-01-01T00:00:00.000Z");
        await store.releaseIdempotency(appended.key, appended.token, "2099-01-01T00:00:00.000Z");
        expect(await store.readIdempotency(none.key)).toBeUndefined();
        expect(await store.readIdempotency(appended.key)).toEqual({ ...appended, state: "done", status: 200, body: { n: 1 }, expires_at: "2099-01-01T00:00:00.000Z" });
      });

      it("purges only records that no longer hold their key", async () => {
        const store = await fresh();
        const p = ns();
        const old = claimOf(`${p}old`);
        const fresh1 = claimOf(`${p}new`);
        const acted = claimOf(`${p}acted`, "2020-01-01T00:00:00.000Z");
        for (const c of [old, fresh1, acted]) await store.claimIdempotency(c, "2019-01-01T00:00:00.000Z");
        await store.saveIdempotency(idem(old, "2020-01-01T00:00:00.000Z"));
        await store.saveIdempotency(idem(fresh1));
        await store.saveIdempotency({ ...acted, status: 200, body: {} });
        expect(await store.readIdempotency(`${p}missing`)).toBeUndefined();
        expect(await store.purgeIdempotency("2021-01-01T00:00:00.000Z")).toBe(1);
        expect(await store.readIdempotency(old.key)).toBeUndefined();
        expect(await store.readIdempotency(fresh1.key)).toBeDefined();
        expect(await store.readIdempotency(acted.key)).toBeDefined();
        expect(await store.purgeIdempotency("2021-01-01T00:00:00.000Z")).toBe(0);
      });
    });

    describe("reserved id ranges", () => {
      it("gives concurrent reservations, across handles, ranges that never overlap, from 1", async () => {
        const { store, open } = await setup();
        const handles = options.durable ? [store, await open()] : [store];
        const sequence = `${ns()}ids`;
        const firsts = await Promise.all(Array.from({ length: 20 }, (_, i) => handles[i % handles.length]!.reserveIds(sequence, 10)));
        expect([...firsts].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => 1 + i * 10));
        expect(await store.reserveIds(`${ns()}other`, 5)).toBe(1);
      });

      it("reads the next integer with a count of 0, taking none, from every handle", async () => {
        const { store, open } = await setup();
        const other = options.durable ? await open() : store;
        const sequence = `${ns()}read`;
        expect(await store.reserveIds(sequence, 0)).toBe(1);
        expect(await other.reserveIds(sequence, 3)).toBe(1);
        expect([await store.reserveIds(sequence, 0), await other.reserveIds(sequence, 0)]).toEqual([4, 4]);
        expect(await store.reserveIds(sequence, 1)).toBe(4);
      });
    });

    // Registered only for durable stores (not skipped: a memory store has nothing to reopen).
    if (options.durable) describe("durability", () => {
      it("keeps events, revisions and idempotency records across close and reopen", async () => {
        const { fixture } = await setup();
        const first = await fixture.open();
        const s = `${ns()}pay`;
        const claim = claimOf(`${s}:k`);
        await first.claimIdempotency(claim, NOW);
        await first.append(s, events(3), { expectedRevision: "no_stream", idempotency: idem(claim) });
        const before = await first.readAll();
        await first.close();
        const second = await fixture.open();
        try {
          expect(await second.readAll()).toEqual(before);
          expect(await second.readIdempotency(claim.key)).toEqual(idem(claim));
          await expect(second.append(s, events(1), { expectedRevision: 1 })).rejects.toMatchObject({ actual: 2 });
        } finally {
          await second.close();
        }
      });
    });
  });
}

/** One projection's commit, the common case of commitBatch(). */
export const commitOne = (rm: ReadModelStore, projection: string, docs: ProjectionCommit["docs"], checkpoint: number, expectedCheckpoint?: number) =>
  rm.commitBatch([{ projection, docs, checkpoint, expectedCheckpoint }]);

export function readModelStoreContract(name: string, factory: () => Promise<StoreFixture<ReadModelStore>>, options: ContractOptions) {
  const setup = harness(factory);
  const fresh = async () => (await setup()).store;

  describe(`ReadModelStore contract: ${name}`, () => {
    it("starts at checkpoint 0 with no documents", async () => {
      const rm = await fresh();
      expect(await rm.checkpoint("payments")).toBe(0);
      expect(await rm.get("payments", "p1")).toBeUndefined();
      expect(await rm.list("payments", "")).toEqual([]);
    });

    it("commits documents and the checkpoint together and upserts by key", async () => {
      const rm = await fresh();
      await commitOne(rm, "payments", [{ key: "p1", doc: { amount: "1.00", tags: ["a"] } }, { key: "p2", doc: { amount: "2.00" } }], 7);
      await commitOne(rm, "payments", [{ key: "p1", doc: { amount: "1.50" } }], 9);
      expect(await rm.checkpoint("payments")).toBe(9);
      expect(await rm.get("payments", "p1")).toEqual({ amount: "1.50" });
      expect(await rm.get("payments", "p2")).toEqual({ amount: "2.00" });
    });

    it("a key given twice in one commit holds its last document (a fold that changed it twice in a batch)", async () => {
      const rm = await fresh();
      await commitOne(rm, "endpoints", [{ key: "a/1", doc: { v: 1 } }, { key: "a/2", doc: { v: 1 } }, { key: "a/1", doc: { v: 2 } }, { key: "a/1", doc: { v: 3 } }], 4);
      expect([await rm.get("endpoints", "a/1"), await rm.get("endpoints", "a/2"), await rm.count("endpoints"), await rm.checkpoint("endpoints")]).toEqual([{ v: 3 }, { v: 1 }, 2, 4]);
    });

    it("moves the checkpoint with no documents", async () => {
      const rm = await fresh();
      await commitOne(rm, "payments", [], 12);
      expect(await rm.checkpoint("payments")).toBe(12);
    });

    it("reads several checkpoints at once where it can, in the order asked, 0 for one that never ran", async () => {
      const rm = await fresh();
      await rm.commitBatch([
        { projection: "payments", docs: [], checkpoint: 12 },
        { projection: "terminals", docs: [], checkpoint: 5 },
      ]);
      const names = ["terminals", "never", "payments"];
      expect(await Promise.all(names.map((n) => rm.checkpoint(n)))).toEqual([5, 0, 12]);
      if (rm.checkpoints) expect(await rm.checkpoints(names)).toEqual([5, 0, 12]);
    });

    it("lists by literal key prefix in binary key order", async () => {
      const rm = await fresh();
      const keys = ["acct_1/b", "acct_1/a", "acct_1/B", "acct_10/a", "acctX1/a", "acct%1/a"];
      await commitOne(rm, "cards", keys.map((key) => ({ key, doc: { key } })), 1);
      expect(await rm.list("cards", "acct_1/")).toEqual([{ key: "acct_1/B" }, { key: "acct_1/a" }, { key: "acct_1/b" }]);
      expect(await rm.list("cards", "acct%")).toEqual([{ key: "acct%1/a" }]);
      expect((await rm.list<{ key: string }>("cards", "")).map((d) => d.key)).toEqual([...keys].sort());
      expect([await rm.count("cards"), await rm.count("payments")]).toEqual([keys.length, 0]);
    });

    it("lists a page: keys after a key, at most a limit", async () => {
      const rm = await fresh();
      const keys = ["a/001", "a/002", "a/003", "a/004", "b/001"];
      await commitOne(rm, "events", keys.map((key) => ({ key, doc: { key } })), 1);
      const page = async (after?: string, limit?: number) => (await rm.list<{ key: string }>("events", "a/", { after, limit })).map((d) => d.key);
      expect(await page(undefined, 2)).toEqual(["a/001", "a/002"]);
      expect(await page("a/002", 2)).toEqual(["a/003", "a/004"]);
      expect(await page("a/004", 2)).toEqual([]);
      expect(await page("a/001")).toEqual(["a/002", "a/003", "a/004"]);
      // their keys alone, the same page
      expect(await rm.keys("events", "a/", { after: "a/001", limit: 2 })).toEqual(["a/002", "a/003"]);
      expect(await rm.keys("events", "")).toEqual(keys);
    });

    it("commits with the expected checkpoint and refuses a stale one, writing nothing", async () => {
      const rm = await fresh();
      await commitOne(rm, "payments", [{ key: "p1", doc: { v: 1 } }], 5, 0);
      const error = await commitOne(rm, "payments", [{ key: "p1", doc: { v: 2 } }, { key: "p2", doc: {} }], 9, 0).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckpointConflict);
      expect(error).toMatchObject({ projection: "payments", expected: 0, actual: 5 });
      expect(await rm.get("payments", "p1")).toEqual({ v: 1 });
      expect(await rm.get("payments", "p2")).toBeUndefined();
      expect(await rm.checkpoint("payments")).toBe(5);
      await commitOne(rm, "payments", [{ key: "p1", doc: { v: 3 } }], 9, 5);
      expect(await rm.get("payments", "p1")).toEqual({ v: 3 });
    });

    it("lets exactly one of several committers from the same checkpoint win, across handles", async () => {
      const { store, open } = await setup();
      const handles = options.durable ? [store, await open()] : [store];
      const attempts = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => commitOne(handles[i % handles.length]!, "payments", [{ key: "k", doc: { by: i } }], 10 + i, 0)),
      );
      const won = attempts.flatMap((a, i) => (a.status === "fulfilled" ? [i] : []));
      expect(won).toHaveLength(1);
      for (const a of attempts) if (a.status === "rejected") expect(a.reason).toBeInstanceOf(CheckpointConflict);
      expect(await store.get("payments", "k")).toEqual({ by: won[0] });
      expect(await store.checkpoint("payments")).toBe(10 + won[0]!);
    });

    it("commits several projections in one batch, each with its documents and checkpoint", async () => {
      const rm = await fresh();
      await rm.commitBatch([
        { projection: "payments", docs: [{ key: "p1", doc: { s: "a" } }], checkpoint: 4, expectedCheckpoint: 0 },
        { projection: "timeline", docs: [{ key: "p1", doc: { n: 1 } }, { key: "p2", doc: { n: 2 } }], checkpoint: 4, expectedCheckpoint: 0 },
        { projection: "terminals", docs: [], checkpoint: 4 },
      ]);
      expect(await Promise.all(["payments", "timeline", "terminals"].map((p) => rm.checkpoint(p)))).toEqual([4, 4, 4]);
      expect(await rm.list("payments", "")).toEqual([{ s: "a" }]);
      expect(await rm.list("timeline", "")).toEqual([{ n: 1 }, { n: 2 }]);
      await rm.commitBatch([]);
      expect(await rm.checkpoint("payments")).toBe(4);
    });

    it("writes nothing of a batch when one projection's expected checkpoint is stale", async () => {
      const rm = await fresh();
      await commitOne(rm, "payments", [{ key: "p1", doc: { v: 1 } }], 5);
      await commitOne(rm, "timeline", [{ key: "p1", doc: { v: 1 } }], 3);
      const error = await rm
        .commitBatch([
          { projection: "payments", docs: [{ key: "p1", doc: { v: 2 } }, { key: "p2", doc: {} }], checkpoint: 9, expectedCheckpoint: 5 },
          { projection: "timeline", docs: [{ key: "p1", doc: { v: 2 } }], checkpoint: 9, expectedCheckpoint: 5 },
          { projection: "cards", docs: [{ key: "c1", doc: {} }], checkpoint: 9, expectedCheckpoint: 0 },
        ])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckpointConflict);
      expect(error).toMatchObject({ projection: "timeline", expected: 5, actual: 3 });
      expect([await rm.checkpoint("payments"), await rm.checkpoint("timeline"), await rm.checkpoint("cards")]).toEqual([5, 3, 0]);
      expect(await rm.list("payments", "")).toEqual([{ v: 1 }]);
      expect(await rm.list("timeline", "")).toEqual([{ v: 1 }]);
      expect(await rm.list("cards", "")).toEqual([]);
    });

    it("lets exactly one of several batches from the same checkpoints win, across handles", async () => {
      const { store, open } = await setup();
      const handles = options.durable ? [store, await open()] : [store];
      const attempts = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) =>
          handles[i % handles.length]!.commitBatch(
            ["a", "b"].map((projection) => ({ projection, docs: [{ key: "k", doc: { by: i } }], checkpoint: 10 + i, expectedCheckpoint: 0 })),
          ),
        ),
      );
      const won = attempts.flatMap((a, i) => (a.status === "fulfilled" ? [i] : []));
      expect(won).toHaveLength(1);
      for (const a of attempts) if (a.status === "rejected") expect(a.reason).toBeInstanceOf(CheckpointConflict);
      for (const p of ["a", "b"]) {
        expect(await store.get(p, "k")).toEqual({ by: won[0] });
        expect(await store.checkpoint(p)).toBe(10 + won[0]!);
      }
    });

    it("gets many documents by key in one call: only those stored, copies, any number of keys", async () => {
      const rm = await fresh();
      const keys = Array.from({ length: 3000 }, (_, i) => `k${i}`);
      await commitOne(rm, "a", keys.filter((_, i) => i % 2 === 0).map((key) => ({ key, doc: { key } })), 1);
      await commitOne(rm, "b", [{ key: "k1", doc: { other: true } }], 1);
      expect(await rm.getMany("a", [])).toEqual(new Map());
      const found = await rm.getMany<{ key: string }>("a", ["k2", "k1", "missing", "k0"]);
      expect(found).toEqual(new Map([["k2", { key: "k2" }], ["k0", { key: "k0" }]]));
      found.get("k0")!.key = "changed";
      expect(await rm.get("a", "k0")).toEqual({ key: "k0" });
      const all = await rm.getMany<{ key: string }>("a", keys);
      expect(all.size).toBe(1500);
      expect([...all.values()].every((d) => Number(d.key.slice(1)) % 2 === 0)).toBe(true);
    });

    it("keeps projections apart and resets one from zero", async () => {
      const rm = await fresh();
      await commitOne(rm, "a", [{ key: "k", doc: 1 }], 3);
      await commitOne(rm, "b", [{ key: "k", doc: 2 }], 4);
      await rm.reset("a");
      expect(await rm.checkpoint("a")).toBe(0);
      expect(await rm.get("a", "k")).toBeUndefined();
      expect(await rm.get("b", "k")).toBe(2);
      expect(await rm.checkpoint("b")).toBe(4);
    });

    it("changing a returned document changes nothing stored: getMany's is a copy, the others frozen (the change throws)", async () => {
      const rm = await fresh();
      await commitOne(rm, "a", [{ key: "k", doc: { n: 1 } }], 1);
      for (const doc of [(await rm.get<{ n: number }>("a", "k"))!, (await rm.list<{ n: number }>("a", ""))[0]!]) expect(() => (doc.n = 2)).toThrow(TypeError);
      (await rm.getMany<{ n: number }>("a", ["k"])).get("k")!.n = 3;
      expect(await rm.get("a", "k")).toEqual({ n: 1 });
    });

    if (options.durable) it("keeps documents and checkpoints across close and reopen", async () => {
      const { fixture } = await setup();
      const first = await fixture.open();
      await commitOne(first, "payments", [{ key: "p1", doc: { s: "succeeded" } }], 5);
      await first.close();
      const second = await fixture.open();
      try {
        expect(await second.checkpoint("payments")).toBe(5);
        expect(await second.get("payments", "p1")).toEqual({ s: "succeeded" });
      } finally {
        await second.close();
      }
    });
  });
}
