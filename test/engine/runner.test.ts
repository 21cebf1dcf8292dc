// The projection runner's reads and commits: one commitBatch per batch for every projection, one
// getMany per projection and batch, no document read at all while rebuilding from zero, and no
// event applied twice when several runners project the same read models.
import { describe, expect, it } from "vitest";
import { defineProjection } from "../../projections/projection.js";
import { createProjectionRunner } from "../../projections/runner.js";
import { createMemoryReadModels, createMemoryStore } from "../../src/store/memory/index.js";
import type { EventStore, ReadModelStore, RecordedEvent } from "../../src/store/port.js";

// Not idempotent on purpose: an event applied twice shows in the count.
const counts = defineProjection<{ stream: string; events: number; positions: number[] }>({
  name: "counts",
  keyOf: (e) => e.stream,
  apply: (doc, e) => ({ stream: e.stream, events: (doc?.events ?? 0) + 1, positions: [...(doc?.positions ?? []), e.position] }),
});
const evens = defineProjection<{ n: number }>({
  name: "evens",
  keyOf: (e) => (e.revision % 2 === 0 ? `even-${e.stream}` : null),
  apply: (doc) => ({ n: (doc?.n ?? 0) + 1 }),
});
const PROJECTIONS = [counts, evens];

/** Appends `perStream` events to each stream (revisions `from` on), round robin, so a stream's events span batches. */
async function fill(store: EventStore, streams: number, perStream: number, from = 0) {
  for (let r = from; r < perStream; r++)
    for (let s = 0; s < streams; s++)
      await store.append(`s${s}`, [{ id: `e-${s}-${r}`, type: "t", version: 1, data: {}, metadata: { timestamp: "2026-01-01T00:00:00.000+00:00", request_id: r } }], { expectedRevision: r - 1 });
}

/** The read-model store, counting the calls the runner makes and the keys it reads. */
function counted(inner: ReadModelStore) {
  const calls = { get: 0, getMany: 0, keysRead: 0, commitBatch: 0 };
  const store: ReadModelStore = {
    ...inner,
    get: (p, k) => (calls.get++, inner.get(p, k)),
    getMany: (p, keys) => (calls.getMany++, (calls.keysRead += keys.length), inner.getMany(p, keys)),
    commitBatch: (commits) => (calls.commitBatch++, inner.commitBatch(commits)),
  };
  return { store, calls };
}

async function docs(readModels: ReadModelStore) {
  return Promise.all(PROJECTIONS.map(async (p) => ({ checkpoint: await readModels.checkpoint(p.name), docs: await readModels.list(p.name, "") })));
}

describe("projection runner", () => {
  it("rebuilds from zero reading no document, one commit per batch for every projection", async () => {
    const store = createMemoryStore();
    await fill(store, 4, 5); // 20 events, each stream's events 4 positions apart
    const { store: readModels, calls } = counted(createMemoryReadModels());
    const runner = createProjectionRunner({ store, readModels, projections: PROJECTIONS, batchSize: 3 });
    expect(await runner.catchUp()).toBe(20);
    expect(calls).toMatchObject({ get: 0, commitBatch: 7 });
    // keys already written by this catch-up are read back (a stream spans batches), new ones are not
    const expected = await docs(readModels);
    expect(expected[0]!.docs).toEqual([0, 1, 2, 3].map((s) => ({ stream: `s${s}`, events: 5, positions: [1, 2, 3, 4, 5].map((r) => (r - 1) * 4 + s + 1) })));
    expect(expected[1]!.docs).toEqual([{ n: 3 }, { n: 3 }, { n: 3 }, { n: 3 }]);

    // a rebuild of one projection in one batch reads none of its documents, and leaves the other alone
    calls.keysRead = 0;
    await createProjectionRunner({ store, readModels, projections: PROJECTIONS, batchSize: 100 }).rebuild("counts");
    expect(calls.keysRead).toBe(0);
    expect(await docs(readModels)).toEqual(expected);

    // a live catch-up reads the documents its batch touches, one getMany per projection and batch
    await fill2(store);
    const before = { ...calls };
    expect(await runner.catchUp()).toBe(22);
    expect(calls.getMany - before.getMany).toBe(2);
    expect(calls.commitBatch - before.commitBatch).toBe(1);
    expect((await readModels.get<{ events: number }>("counts", "s0"))!.events).toBe(6);
  });

  it("a rebuild drops the projection's documents and folds every event again with its current code; an unknown name is refused", async () => {
    const store = createMemoryStore();
    await fill(store, 2, 3);
    const readModels = createMemoryReadModels();
    await createProjectionRunner({ store, readModels, projections: PROJECTIONS }).catchUp();
    // the projection's code changed (same name): a rebuild, not a catch-up, brings its documents up to date
    const recount = defineProjection<{ events: number }>({ name: "counts", keyOf: (e) => `v2-${e.stream}`, apply: (doc) => ({ events: (doc?.events ?? 0) + 1 }) });
    const runner = createProjectionRunner({ store, readModels, projections: [recount, evens] });
    expect(await runner.catchUp()).toBe(6);
    expect((await readModels.list("counts", "")).length).toBe(2);
    expect(await runner.rebuild("counts")).toBe(6);
    expect(await readModels.list("counts", "")).toEqual([{ events: 3 }, { events: 3 }]);
    expect(await readModels.get("counts", "s0")).toBeUndefined();
    await expect(runner.rebuild("nope")).rejects.toThrow("no projection nope");
  });

  it("a rebuild from zero equals catching up event by event, each time by a new runner", async () => {
    const store = createMemoryStore();
    await fill(store, 5, 4);
    const live = createMemoryReadModels();
    // catch up event by event as they arrive ...
    const fresh = createMemoryStore();
    for (const e of await store.readAll()) {
      await fresh.append(e.stream, [e], { expectedRevision: e.revision - 1 });
      await createProjectionRunner({ store: fresh, readModels: live, projections: PROJECTIONS, batchSize: 2 }).catchUp();
    }
    // ... and rebuild the whole history at once: the same documents
    const rebuilt = createMemoryReadModels();
    await createProjectionRunner({ store, readModels: rebuilt, projections: PROJECTIONS, batchSize: 7 }).catchUp();
    expect(await docs(rebuilt)).toEqual(await docs(live));
  });

  it("several runners from zero on the same read models apply every event exactly once", async () => {
    const store = createMemoryStore();
    await fill(store, 6, 6);
    const readModels = createMemoryReadModels();
    const runners = Array.from({ length: 4 }, (_, i) => createProjectionRunner({ store, readModels, projections: PROJECTIONS, batchSize: 2 + i }));
    expect(await Promise.all(runners.map((r) => r.catchUp()))).toEqual([36, 36, 36, 36]);
    const alone = createMemoryReadModels();
    await createProjectionRunner({ store, readModels: alone, projections: PROJECTIONS }).catchUp();
    expect(await docs(readModels)).toEqual(await docs(alone));
  });

  it("a stale read (another runner committed between checkpoint and documents) is retried as a conflict, never folded", async () => {
    // Like the payment machine: applying an event twice throws.
    const strict = defineProjection<{ last: number; events: number }>({
      name: "strict",
      keyOf: (e) => e.stream,
      apply: (doc, e) => {
        if (doc && e.position <= doc.last) throw new Error(`event ${e.position} applied twice`);
        return { last: e.position, events: (doc?.events ?? 0) + 1 };
      },
    });
    const store = createMemoryStore();
    await fill(store, 3, 5);
    const shared = createMemoryReadModels();
    await createProjectionRunner({ store, readModels: shared, projections: [strict] }).catchUp();
    await fill2(store);
    const other = createProjectionRunner({ store, readModels: shared, projections: [strict] });
    let interleaved = 0;
    // the other process commits right after this runner read its checkpoint, before its documents
    const racing: ReadModelStore = {
      ...shared,
      getMany: async (p, keys) => {
        if (interleaved++ === 0) await other.catchUp();
        return shared.getMany(p, keys);
      },
    };
    expect(await createProjectionRunner({ store, readModels: racing, projections: [strict] }).catchUp()).toBe(17);
    const alone = createMemoryReadModels();
    await createProjectionRunner({ store, readModels: alone, projections: [strict] }).catchUp();
    expect(await shared.list("strict", "")).toEqual(await alone.list("strict", ""));
  });

  it("projections at different checkpoints each apply every event once, in batches that straddle the one ahead", async () => {
    const store = createMemoryStore();
    await fill(store, 1, 5);
    const readModels = createMemoryReadModels();
    // evens alone first: at checkpoint 5 while counts is at 0
    await createProjectionRunner({ store, readModels, projections: [evens] }).catchUp();
    await fill(store, 1, 12, 5);
    // batches 1-3 (evens already past them), 4-6 (evens' checkpoint inside), 7-9, 10-12
    expect(await createProjectionRunner({ store, readModels, projections: PROJECTIONS, batchSize: 3 }).catchUp()).toBe(12);
    expect(await readModels.list("counts", "")).toEqual([{ stream: "s0", events: 12, positions: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] }]);
    // revisions 0, 2, ..., 10
    expect(await readModels.list("evens", "")).toEqual([{ n: 6 }]);
    expect(await readModels.checkpoint("evens")).toBe(12);
  });

  it("a projection that fails on an event (not a race: nobody else committed) fails the catch-up with its error", async () => {
    const broken = defineProjection<{ n: number }>({
      name: "broken",
      keyOf: (e) => e.stream,
      apply: (doc, e) => {
        if (e.position === 3) throw new Error("cannot fold event 3");
        return { n: (doc?.n ?? 0) + 1 };
      },
    });
    const store = createMemoryStore();
    await fill(store, 1, 4);
    const readModels = createMemoryReadModels();
    await expect(createProjectionRunner({ store, readModels, projections: [broken], batchSize: 2 }).catchUp()).rejects.toThrow("cannot fold event 3");
    // the batch before it is committed, the failing one is not
    expect(await readModels.checkpoint("broken")).toBe(2);
  });
});

/**
 * The memory store with its subscriptions handed to the test: `deliver` signals the runner as the
 * store would for appended events, so a burst and its order are the test's, not a pump's.
 */
function drivenSubscriptions(inner: EventStore) {
  const subscriptions: { after: number | undefined; onEvent: (e: RecordedEvent) => unknown; closed: boolean }[] = [];
  let subscribed = () => {};
  let catchUps = 0;
  const store: EventStore = {
    ...inner,
    readAll: async (options) => {
      const events = await inner.readAll(options);
      if (events.length === 0) catchUps++; // every catch-up ends with one empty read
      return events;
    },
    subscribeToAll: (options, onEvent) => {
      const s = { after: options.after, onEvent, closed: false };
      subscriptions.push(s);
      subscribed();
      return { close: async () => void (s.closed = true) };
    },
  };
  return {
    store,
    subscriptions,
    catchUps: () => catchUps,
    nextSubscription: () => new Promise<void>((resolve) => (subscribed = resolve)),
    deliver: async (after: number) => {
      for (const e of await inner.readAll({ after })) subscriptions.at(-1)!.onEvent(e);
    },
  };
}

describe("live projections, signals delivered by the test", () => {
  it("start twice subscribes once; a burst costs one catch-up; stop closes the subscription and waits for the signalled catch-up; start again subscribes again", async () => {
    const inner = createMemoryStore();
    await fill(inner, 2, 2); // positions 1-4
    const live = drivenSubscriptions(inner);
    const readModels = createMemoryReadModels();
    const runner = createProjectionRunner({ store: live.store, readModels, projections: PROJECTIONS });
    const subscribed = live.nextSubscription();
    runner.start();
    runner.start();
    await subscribed;
    // subscribed where the first catch-up got to
    expect(live.subscriptions.map((s) => s.after)).toEqual([4]);

    // a burst of three events, signalled at once: folded from the events the signal carries (the
    // store is not read for them), and our catchUp() reads the store to its end once
    await fill(inner, 1, 5, 2); // s0, positions 5-7
    const before = live.catchUps();
    await live.deliver(4);
    await runner.catchUp();
    expect(live.catchUps() - before).toBe(1);
    expect(await readModels.checkpoint("counts")).toBe(7);

    // the next signal is acted on too, and stop() returns once its catch-up is done
    await fill(inner, 1, 6, 5); // s0, position 8
    await live.deliver(7);
    await runner.stop();
    expect(await readModels.checkpoint("counts")).toBe(8);
    expect(live.subscriptions.map((s) => s.closed)).toEqual([true]);

    const again = live.nextSubscription();
    runner.start();
    await again;
    expect(live.subscriptions.map((s) => s.after)).toEqual([4, 8]);
    await runner.stop();
    expect(live.subscriptions.map((s) => s.closed)).toEqual([true, true]);
    expect((await readModels.get<{ events: number }>("counts", "s0"))?.events).toBe(6);
  });
});

async function fill2(store: EventStore) {
  await store.append("s0", [{ id: "late-0", type: "t", version: 1, data: {}, metadata: { timestamp: "2026-01-01T00:00:00.000+00:00", request_id: 9 } }], { expectedRevision: 4 });
  await store.append("s9", [{ id: "late-9", type: "t", version: 1, data: {}, metadata: { timestamp: "2026-01-01T00:00:00.000+00:00", request_id: 9 } }], { expectedRevision: "no_stream" });
}

describe("live projections", () => {
  it("start from the checkpoint: events already projected are not read again, new ones are projected", async () => {
    const inner = createMemoryStore();
    await fill(inner, 5, 20);
    const readModels = createMemoryReadModels();
    await createProjectionRunner({ store: inner, readModels, projections: PROJECTIONS }).catchUp();
    // a restarted process: its runner starts live on read models already at the store's head
    let eventsRead = 0;
    const store: EventStore = {
      ...inner,
      readAll: async (options) => {
        const events = await inner.readAll(options);
        eventsRead += events.length;
        return events;
      },
      subscribeToAll: (options, onEvent) => inner.subscribeToAll(options, (e) => (eventsRead++, onEvent(e))),
    };
    const runner = createProjectionRunner({ store, readModels, projections: PROJECTIONS });
    runner.start();
    await store.append("s0", [{ id: "late", type: "t", version: 1, data: {}, metadata: { timestamp: "2026-01-01T00:00:00.000+00:00", request_id: 99 } }], { expectedRevision: 19 });
    for (let i = 0; i < 200 && (await readModels.checkpoint("counts")) < 101; i++) await new Promise((r) => setTimeout(r, 5));
    expect(await readModels.checkpoint("counts")).toBe(101);
    expect((await readModels.get<{ events: number }>("counts", "s0"))?.events).toBe(21);
    // the new event, read by the subscription and by the catch-up it signalled: nothing older
    expect(eventsRead).toBeLessThanOrEqual(2);
    await runner.stop();
  });

  it("drops a retired projection's documents and checkpoint on its first catch-up, once; a store without them is not written", async () => {
    const store = createMemoryStore();
    await fill(store, 2, 2);
    const inner = createMemoryReadModels();
    await inner.commitBatch([{ projection: "timeline", docs: [{ key: "p1", doc: { old: true } }], checkpoint: 4 }]);
    const resets: string[] = [];
    const readModels: ReadModelStore = { ...inner, reset: (p) => (resets.push(p), inner.reset(p)) };
    const runner = createProjectionRunner({ store, readModels, projections: PROJECTIONS, retired: ["timeline", "never_written"] });
    expect(await runner.catchUp()).toBe(4);
    expect([await inner.checkpoint("timeline"), await inner.count("timeline")]).toEqual([0, 0]);
    expect(resets).toEqual(["timeline"]);
    await inner.commitBatch([{ projection: "timeline", docs: [{ key: "p1", doc: { old: true } }], checkpoint: 4 }]);
    await runner.catchUp();
    expect(resets).toEqual(["timeline"]);
    expect((await docs(readModels)).map((d) => d.checkpoint)).toEqual([4, 4]);
  });

  it("runs a catch-up from zero with more than a batch to go in the store's bulk window, and nothing else", async () => {
    const store = createMemoryStore();
    await fill(store, 2, 3); // 6 events
    const inner = createMemoryReadModels();
    const windows: number[] = [];
    let commitsInWindow = 0;
    let inWindow = false;
    const readModels: ReadModelStore = {
      ...inner,
      commitBatch: (commits) => ((commitsInWindow += inWindow ? 1 : 0), inner.commitBatch(commits)),
      async bulk(work) {
        inWindow = true;
        try {
          return await work();
        } finally {
          inWindow = false;
          windows.push(commitsInWindow);
          commitsInWindow = 0;
        }
      },
    };
    const runner = createProjectionRunner({ store, readModels, projections: PROJECTIONS, batchSize: 4 });
    await runner.catchUp();
    expect(windows).toEqual([2]); // batches of 4 and 2, both in the window
    await fill(store, 2, 6, 3); // 6 more, from a checkpoint: no window
    await runner.catchUp();
    expect(windows).toEqual([2]);
    await runner.rebuild("counts"); // from zero again
    expect(windows).toEqual([2, 3]);
    const small = createProjectionRunner({ store: createMemoryStore(), readModels, projections: [defineProjection({ ...evens, name: "fresh" })], batchSize: 4 });
    await small.catchUp(); // from zero but nothing to apply: no window
    expect(windows).toEqual([2, 3]);
  });
});
