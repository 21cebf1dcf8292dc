// audit --all holds a page of events and one stream at a time, not the store: checked on the reads
// it makes (through a wrapped store), not by timing or by measuring memory.
import { beforeAll, describe, expect, it } from "vitest";
import { createProjectionRunner } from "../../projections/runner.js";
import { defineProjection } from "../../projections/projection.js";
import { auditAll, streamHeads } from "../../src/audit/audit.js";
import { eventsStore, lastPosition } from "../../src/audit/source.js";
import { createMemoryReadModels } from "../../src/store/memory/index.js";
import { UnreadableEvent, type EventStore, type RecordedEvent } from "../../src/store/port.js";
import { runFlows, type Flows } from "./flows.js";

let flows: Flows;
let stored: RecordedEvent[];
beforeAll(async () => {
  flows = await runFlows();
  stored = await flows.engine.store.readAll();
});

/** The store, with every read recorded: how many events each asked for and got. */
function watched(store: EventStore) {
  const reads: Array<{ kind: "all" | "stream"; asked?: number; got: number; stream?: string }> = [];
  const wrapped: EventStore = {
    ...store,
    async readAll(options = {}) {
      const got = await store.readAll(options);
      reads.push({ kind: "all", asked: options.maxCount, got: got.length });
      return got;
    },
    async readStream(stream, options) {
      const got = await store.readStream(stream, options);
      reads.push({ kind: "stream", stream, asked: options?.maxCount, got: got.length });
      return got;
    },
  };
  return { store: wrapped, reads };
}

describe("auditAll reads in pages", () => {
  it("every read of the whole store is a page of at most pageSize events; each stream is read once, on its own", async () => {
    const { store, reads } = watched(flows.engine.store);
    const report = await auditAll({ store, readModels: flows.engine.readModels }, { pageSize: 5 });
    expect(report).toMatchObject({ events: stored.length, findings: [], read_models: "equal" });

    const all = reads.filter((r) => r.kind === "all");
    expect(all.length).toBeGreaterThan(stored.length / 5); // it paged
    for (const r of all) {
      expect(r.asked).toBeDefined();
      expect(r.asked!).toBeLessThanOrEqual(5);
    }
    const streams = new Set(stored.map((e) => e.stream));
    const streamReads = reads.filter((r) => r.kind === "stream");
    expect(streamReads.map((r) => r.stream).sort()).toEqual([...streams].sort());
    const longest = Math.max(...[...streams].map((s) => stored.filter((e) => e.stream === s).length));
    for (const r of streamReads) expect(r.got).toBeLessThanOrEqual(longest);

    // the same verdicts as with the default page size
    expect(await auditAll({ store: flows.engine.store, readModels: flows.engine.readModels })).toEqual(report);
  });

  it("documents several streams write are folded in a further paged pass, and compared", async () => {
    // one document written by every payment stream
    const shared = defineProjection<{ events: number }>({
      name: "payment_events",
      keyOf: (e) => (e.stream.startsWith("payment-") ? "all" : null),
      apply: (doc, _e) => ({ events: (doc?.events ?? 0) + 1 }),
    });
    const readModels = createMemoryReadModels();
    await createProjectionRunner({ store: flows.engine.store, readModels, projections: [shared] }).catchUp();
    const { store, reads } = watched(flows.engine.store);
    const clean = await auditAll({ store, readModels }, { pageSize: 7, projections: [shared] });
    expect(clean).toMatchObject({ findings: [], read_models: "equal" });
    for (const r of reads.filter((r) => r.kind === "all")) expect(r.asked!).toBeLessThanOrEqual(7);

    const checkpoint = await readModels.checkpoint("payment_events");
    await readModels.commitBatch([{ projection: "payment_events", docs: [{ key: "all", doc: { events: 1 } }], checkpoint }]);
    const tampered = await auditAll({ store, readModels }, { pageSize: 7, projections: [shared] });
    expect(tampered.findings).toEqual([expect.objectContaining({ kind: "read_model_mismatch", subject: "read_model:payment_events" })]);
  });
});

describe("documents no event explains", () => {
  it("are counted and the first five named, their keys read a page at a time", async () => {
    const shared = defineProjection<{ events: number }>({ name: "by_stream", keyOf: (e) => e.stream, apply: (doc) => ({ events: (doc?.events ?? 0) + 1 }) });
    const readModels = createMemoryReadModels();
    await createProjectionRunner({ store: flows.engine.store, readModels, projections: [shared] }).catchUp();
    const checkpoint = await readModels.checkpoint("by_stream");
    const extra = ["x1", "x2", "x3", "x4", "x5", "x6", "x7"];
    await readModels.commitBatch([{ projection: "by_stream", docs: extra.map((key) => ({ key, doc: { events: 1 } })), checkpoint }]);
    const report = await auditAll({ store: flows.engine.store, readModels }, { pageSize: 3, projections: [shared] });
    expect(report.findings).toEqual([{ kind: "read_model_mismatch", subject: "read_model:by_stream", message: "read model by_stream has 7 document(s) no event explains: x1, x2, x3, x4, x5 and 2 more" }]);
  });
});

describe("auditAll past events that cannot be read", () => {
  it("reports each (unreadable), reads on past it in pages of at most pageSize, and verifies every other stream", async () => {
    // two events whose rows would not parse, in two payment streams, mid-page
    const bad = [stored[12]!, stored[40]!];
    const failing = (got: RecordedEvent[]) => {
      const first = got.find((e) => bad.some((b) => b.id === e.id));
      if (first) throw new UnreadableEvent(first, "data", new SyntaxError("Unexpected end of JSON input"));
      return got;
    };
    const { store, reads } = watched({ ...flows.engine.store, readAll: async (o) => failing(await flows.engine.store.readAll(o)), readStream: async (s, o) => failing(await flows.engine.store.readStream(s, o)) });
    const report = await auditAll({ store, readModels: flows.engine.readModels }, { pageSize: 5 });
    expect(report).toMatchObject({ events: stored.length, streams: new Set(stored.map((e) => e.stream)).size, read_models: "not_compared", read_models_not_compared: 2 });
    expect(report.findings).toEqual(bad.map((e) => expect.objectContaining({ kind: "unreadable", subject: e.stream, event_id: e.id, revision: e.revision })));
    for (const r of reads.filter((r) => r.kind === "all")) expect(r.asked!).toBeLessThanOrEqual(5);
    // a head anchored past the event that cannot be read is not said truncated (a probe): it cannot be looked for
    const anchors = await streamHeads(flows.engine.store);
    const anchored = await auditAll({ store }, { pageSize: 5, anchors });
    expect(anchored.findings.filter((f) => f.kind === "anchor_missing").map((f) => f.message)).toEqual(
      bad.map((e) => `${e.stream}: its anchored head ${anchors[e.stream]!.slice(0, 12)}… cannot be looked for past an event that cannot be read (above)`),
    );
  });
});

describe("lastPosition", () => {
  it("finds the last global position with single-event reads, gaps included", async () => {
    const event = (position: number): RecordedEvent => ({ id: `e${position}`, type: "T", version: 1, data: {}, metadata: { timestamp: "2026-01-01T00:00:00Z", request_id: 1 }, stream: "s", revision: position, position });
    for (const [count, gap] of [[0, 1], [1, 1], [2, 1], [1023, 1], [1024, 1], [1025, 1], [3000, 1], [500, 7]] as const) {
      const { store, reads } = watched(eventsStore(Array.from({ length: count }, (_, i) => event((i + 1) * gap))));
      expect(await lastPosition(store), `${count} events every ${gap}`).toBe(count * gap);
      for (const r of reads) expect(r.asked).toBe(1);
      expect(reads.length).toBeLessThanOrEqual(2 * Math.log2(Math.max(count * gap, 1024)) + 2);
    }
  });
});
