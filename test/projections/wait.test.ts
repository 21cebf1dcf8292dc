// Reads that must reflect earlier writes wait for a position, not for a catch-up of their own:
// waiters share the queued catch-up, a read already covered does no I/O at all, and the wait is
// bounded (ReadModelBehind: 503 with Retry-After), after which the read models carry on.
import { describe, expect, it } from "vitest";
import { ReadModelBehind } from "../../projections/behind.js";
import { defineProjection } from "../../projections/projection.js";
import { createProjectionRunner } from "../../projections/runner.js";
import { createMemoryReadModels, createMemoryStore } from "../../src/store/memory/index.js";
import type { EventStore, ReadModelStore } from "../../src/store/port.js";

const counts = defineProjection<{ n: number }>({ name: "counts", keyOf: (e) => e.stream, apply: (doc) => ({ n: (doc?.n ?? 0) + 1 }) });

const append = (store: EventStore, stream: string, n = 1) =>
  store.append(
    stream,
    Array.from({ length: n }, (_, i) => ({ id: `${stream}-${i}-${Math.random()}`, type: "t", version: 1, data: {}, metadata: { timestamp: "2026-01-01T00:00:00.000+00:00", request_id: 1 } })),
    { expectedRevision: "any" },
  );

/** The event store, counting readAll calls (one per catch-up that finds nothing new, more when it reads). */
function counting(inner: EventStore) {
  const calls = { readAll: 0, head: 0 };
  const store: EventStore = { ...inner, readAll: (o) => (calls.readAll++, inner.readAll(o)), head: () => (calls.head++, inner.head()) };
  return { store, calls };
}

describe("waiting for a position", () => {
  it("concurrent waiters share one catch-up; a wait already covered reads nothing", async () => {
    const { store, calls } = counting(createMemoryStore());
    const readModels = createMemoryReadModels();
    const runner = createProjectionRunner({ store, readModels, projections: [counts] });
    await runner.ready();
    const { position } = await append(store, "s1", 3);
    await Promise.all(Array.from({ length: 50 }, () => runner.caughtUp()));
    // one catch-up: one read, which came back short of a batch (the store's end: no read to find an empty one)
    expect(calls.readAll).toBe(1);
    expect(await readModels.checkpoint("counts")).toBe(position);
    const before = { ...calls };
    await Promise.all(Array.from({ length: 50 }, () => runner.waitFor(position)));
    expect(calls).toEqual(before); // covered: no I/O, not even the head
  });

  it("a catch-up reads on after a full batch, and stops at the first short one", async () => {
    const { store, calls } = counting(createMemoryStore());
    const readModels = createMemoryReadModels();
    const runner = createProjectionRunner({ store, readModels, projections: [counts], batchSize: 3 });
    await runner.ready();
    await append(store, "s1", 3);
    await runner.caughtUp();
    expect(calls.readAll).toBe(2); // 3 events (a full batch), then none
    const { position } = await append(store, "s2", 4);
    await runner.caughtUp();
    expect(calls.readAll).toBe(4); // 3, then 1 (short: the end)
    expect(await readModels.checkpoint("counts")).toBe(position);
    expect(await readModels.get("counts", "s2")).toBeDefined();
  });

  it("concurrent caughtUp calls share the head's reads, and a call made during a read waits for a later one that counts the writes before it", async () => {
    const inner = createMemoryStore();
    let heads = 0;
    let release: () => void = () => undefined;
    let gate: Promise<void> | undefined;
    // the head as it stood when the read started, answered when the gate opens (a slow round trip)
    const store: EventStore = {
      ...inner,
      head: () => {
        heads++;
        const at = inner.head();
        return gate ? gate.then(() => at) : at;
      },
    };
    const readModels = createMemoryReadModels();
    const runner = createProjectionRunner({ store, readModels, projections: [counts] });
    await runner.ready(); // its own head read (read models past the head are dropped)
    heads = 0;
    gate = new Promise<void>((r) => (release = r));
    await append(store, "s0");
    const first = runner.caughtUp(); // its head read starts now and is held
    await new Promise((r) => setTimeout(r, 5));
    expect(heads).toBe(1);
    await append(store, "s1"); // acknowledged after that read started
    const seen: (number | undefined)[] = [];
    const later = Array.from({ length: 20 }, () => runner.caughtUp().then(async () => void seen.push((await readModels.get<{ n: number }>("counts", "s1"))?.n)));
    gate = undefined;
    release();
    await Promise.all([first, ...later]);
    // every call that began after the append sees it: none was answered by the read that started before
    expect(seen).toEqual(Array.from({ length: 20 }, () => 1));
    expect(heads).toBe(2); // 21 calls, two reads: the held one and one shared by the 20 made during it
  });

  it("a waiter is woken by the live projector's commit that passes its position", async () => {
    const store = createMemoryStore();
    const readModels = createMemoryReadModels();
    const runner = createProjectionRunner({ store, readModels, projections: [counts] });
    runner.start();
    const { position } = await append(store, "s1");
    await runner.waitFor(position);
    expect(await readModels.get("counts", "s1")).toEqual({ n: 1 });
    await runner.stop();
  });

  it("gives up after its bound with ReadModelBehind (503, Retry-After), and the read models carry on once unblocked", async () => {
    const store = createMemoryStore();
    const inner = createMemoryReadModels();
    let release: () => void = () => undefined;
    let blocked = true;
    // a projector that cannot commit: its database is locked by someone else
    const readModels: ReadModelStore = {
      ...inner,
      async commitBatch(commits) {
        if (blocked) await new Promise<void>((resolve) => (release = resolve));
        return inner.commitBatch(commits);
      },
    };
    const runner = createProjectionRunner({ store, readModels, projections: [counts], waitMs: 150 });
    const { position } = await append(store, "s1");
    const started = Date.now();
    const error = await runner.caughtUp().catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(error).toBeInstanceOf(ReadModelBehind);
    expect(error).toMatchObject({ status: 503, code: "read_model_behind", retryAfterSeconds: 1, position, applied: 0 });
    // a shorter bound of its own
    await expect(runner.waitFor(position, { timeoutMs: 10 })).rejects.toBeInstanceOf(ReadModelBehind);
    blocked = false;
    release();
    await runner.caughtUp();
    expect(await readModels.get("counts", "s1")).toEqual({ n: 1 });
  });

  it("a failing catch-up is asked for again until the bound: a store back in time answers the read", async () => {
    const store = createMemoryStore();
    const inner = createMemoryReadModels();
    let failures = 3;
    const readModels: ReadModelStore = {
      ...inner,
      async commitBatch(commits) {
        if (failures-- > 0) throw new Error("database away");
        return inner.commitBatch(commits);
      },
    };
    const runner = createProjectionRunner({ store, readModels, projections: [counts], waitMs: 2_000 });
    await append(store, "s1");
    await runner.caughtUp();
    expect(await readModels.get("counts", "s1")).toEqual({ n: 1 });
  });
});

describe("the live catch-up after a failure", () => {
  it("is asked for again by itself: on an idle system (no read, no write) the read models do not stay behind", async () => {
    const store = createMemoryStore();
    const inner = createMemoryReadModels();
    let failing = false;
    let refused = 0;
    // a lock another session holds past the store's wait: the commit fails
    const readModels: ReadModelStore = { ...inner, commitBatch: (commits) => (failing ? (refused++, Promise.reject(new Error("lock held by another session"))) : inner.commitBatch(commits)) };
    const runner = createProjectionRunner({ store, readModels, projections: [counts] });
    await runner.start();
    try {
      failing = true;
      const { position } = await append(store, "idle");
      await expect.poll(() => refused).toBeGreaterThan(0);
      failing = false;
      // nothing more is asked of the runner: before, the subscription had moved past the event and nothing asked again
      await expect.poll(() => inner.checkpoint("counts"), { timeout: 5_000 }).toBe(position);
      expect(await inner.get("counts", "idle")).toEqual({ n: 1 });
    } finally {
      await runner.stop();
    }
  });
});
