// Event schema versions (machines/event-versions.ts): every schema version's fingerprint is recorded
// in machines/event-fingerprints.json and may never change under its version; the versions of a
// type run 1, 2, ... with an upcaster from each to the next; every stored event of the golden
// streams upcasts, purely, to a valid event of its type's current schema; and an upcast stream
// keeps verifying (hashes of the stored bytes) and exports as stored. (That the golden stores read
// back to the same records through the stores' upcasting: test/audit/golden-streams.test.ts.)
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createEventRegistry,
  CURRENT_SCHEMAS,
  EARLIER_VERSIONS,
  EVENT_REGISTRY,
  fingerprintProblems,
  registryFingerprints,
  storedFormOf,
  upcast,
  upcaster,
} from "../../machines/event-versions.js";
import { AmountString, eventSchema, PaymentEvent, PaymentRefunded } from "../../machines/events.js";
import { verifyChain } from "../../src/audit/chain.js";
import { eventsStore } from "../../src/audit/source.js";
import { exportEvents } from "../../src/audit/transfer.js";
import type { RecordedEvent } from "../../src/store/port.js";

const recorded = JSON.parse(readFileSync(new URL("../../machines/event-fingerprints.json", import.meta.url), "utf8")) as Record<string, string>;

/** Every stored event of the golden streams: each release's export, and the streams written before attempts. */
function goldenEvents(): { source: string; events: RecordedEvent[] }[] {
  const root = new URL("../fixtures/streams/", import.meta.url).pathname;
  const releases = readdirSync(root).filter((d) => /^v\d+\.\d+\.\d+$/.test(d));
  const jsonl = (path: string) => readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as RecordedEvent);
  return [
    ...releases.map((r) => ({ source: `test/fixtures/streams/${r}`, events: jsonl(join(root, r, "events.jsonl")) })),
    { source: "test/engine/fixtures/streams-before-attempts.json", events: (JSON.parse(readFileSync(new URL("../engine/fixtures/streams-before-attempts.json", import.meta.url), "utf8")) as { events: RecordedEvent[] }).events },
  ];
}
const golden = goldenEvents();

const deepFreeze = <T>(value: T): T => {
  if (value && typeof value === "object") for (const v of Object.values(value)) deepFreeze(v);
  return Object.freeze(value);
};

describe("event schema fingerprints", () => {
  it("every version of every event schema has its recorded fingerprint (machines/event-fingerprints.json)", () => {
    expect(fingerprintProblems(recorded)).toEqual([]);
  });

  it("a schema changed under its version fails, naming the event and what to do", () => {
    // PaymentRefunded with one more field, still version 1
    const changed = eventSchema("PaymentRefunded", PaymentRefunded.shape.data.extend({ note: z.string() }));
    const registry = createEventRegistry(CURRENT_SCHEMAS.map((s) => (s === PaymentRefunded ? changed : s)));
    const problems = fingerprintProblems(recorded, registryFingerprints(registry));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^changed: PaymentRefunded version 1: its schema changed without a new version .* give it version 2 and keep version 1 with an upcaster/);
    // a prose-only change (a description) is not a new version
    const described = eventSchema("PaymentRefunded", PaymentRefunded.shape.data.extend({ reason: z.string().nullable().describe("why") }));
    expect(fingerprintProblems(recorded, registryFingerprints(createEventRegistry(CURRENT_SCHEMAS.map((s) => (s === PaymentRefunded ? described : s)))))).toEqual([]);
  });

  it("a new version is reported until recorded, and a recorded version may not disappear", () => {
    const v2 = eventSchema("PaymentRefunded", PaymentRefunded.shape.data.extend({ note: z.string().nullable() }), 2);
    const registry = createEventRegistry(
      CURRENT_SCHEMAS.map((s) => (s === PaymentRefunded ? v2 : s)),
      { ...EARLIER_VERSIONS, PaymentRefunded: [{ schema: PaymentRefunded, upcast: (d: object) => ({ ...d, note: null }) }] },
    );
    expect(fingerprintProblems(recorded, registryFingerprints(registry))).toEqual([expect.stringMatching(/^new: PaymentRefunded version 2 has no recorded fingerprint/)]);
    const { "PaymentRefunded@1": _gone, ...withoutV1 } = registryFingerprints();
    expect(fingerprintProblems(recorded, withoutV1)).toEqual([expect.stringMatching(/^removed: PaymentRefunded version 1 is recorded but no longer in the registry/)]);
  });
});

describe("the registry", () => {
  it("knows every stored event type, each at its current version with a schema per version", () => {
    for (const schema of CURRENT_SCHEMAS) {
      const { type, version } = schema.shape as unknown as { type: { value: string }; version: { value: number } };
      const entry = EVENT_REGISTRY.get(type.value)!;
      expect(entry.current, type.value).toBe(version.value);
      expect([...entry.schemas.keys()], type.value).toEqual(Array.from({ length: version.value }, (_, i) => i + 1));
    }
  });

  it("refuses versions that do not run 1, 2, ... current, or earlier versions of another type", () => {
    const v3 = eventSchema("PaymentRefunded", PaymentRefunded.shape.data, 3);
    expect(() => createEventRegistry(CURRENT_SCHEMAS.map((s) => (s === PaymentRefunded ? v3 : s)), { ...EARLIER_VERSIONS, PaymentRefunded: [{ schema: PaymentRefunded, upcast: (d) => d }] })).toThrow(
      /PaymentRefunded: current version 3 but 1 earlier version/,
    );
    const v2 = eventSchema("PaymentRefunded", PaymentRefunded.shape.data, 2);
    expect(() => createEventRegistry(CURRENT_SCHEMAS.map((s) => (s === PaymentRefunded ? v2 : s)), { ...EARLIER_VERSIONS, PaymentRefunded: [{ schema: v2, upcast: (d) => d }] })).toThrow(/earlier version 1 has the schema of PaymentRefunded v2/);
    expect(() => createEventRegistry(CURRENT_SCHEMAS, { ...EARLIER_VERSIONS, NoSuchEvent: [] })).toThrow(/NoSuchEvent: earlier versions of an event with no current schema/);
  });
});

describe("upcasting the golden streams", () => {
  const currentOf = (type: string) => EVENT_REGISTRY.get(type)!.schemas.get(EVENT_REGISTRY.get(type)!.current)!;

  it.each(golden)("every event of $source upcasts, purely, to a valid event of its type's current schema", ({ events }) => {
    expect(events.length).toBeGreaterThan(0);
    for (const stored of events) {
      const frozen = deepFreeze(structuredClone(stored));
      const read = upcast(frozen);
      expect(upcast(frozen), `${stored.type} ${stored.id}`).toEqual(read);
      expect(frozen).toEqual(stored); // the input is untouched
      expect(EVENT_REGISTRY.has(stored.type), `${stored.type} is in the registry`).toBe(true);
      const parsed = currentOf(stored.type).safeParse({ type: read.type, version: read.version, data: read.data });
      expect(parsed.success, `${stored.type} ${stored.id} (${stored.stream}@${stored.revision}): ${parsed.error?.message}`).toBe(true);
      if (stored.version === EVENT_REGISTRY.get(stored.type)!.current) expect(read).toBe(frozen);
      expect(storedFormOf(read)).toEqual(stored);
    }
  });

  it("an event not valid at the version it claims is not upcast (a v1 reference set to null, which only v2 allows): validation refuses it", () => {
    const forged = { type: "TransactionReferenceGiven", version: 1, data: { external_transaction_id: null } };
    expect(upcast(forged)).toBe(forged);
    expect(PaymentEvent.safeParse(upcast(forged)).success).toBe(false);
    const valid = { type: "TransactionReferenceGiven", version: 1, data: { external_transaction_id: "pos-1" } };
    expect(upcast(valid)).toMatchObject({ version: 2, data: { external_transaction_id: "pos-1" } });
  });

  // A worked example of a version change, on the golden streams: PaymentRefunded v2 records who
  // initiated the refund; the upcaster says "unknown" for the refunds stored at v1.
  const v2 = eventSchema("PaymentRefunded", z.object({ ...PaymentRefunded.shape.data.shape, amount: AmountString, initiated_by: z.enum(["merchant", "unknown"]) }), 2);
  const registry = createEventRegistry(
    CURRENT_SCHEMAS.map((s) => (s === PaymentRefunded ? v2 : s)),
    { ...EARLIER_VERSIONS, PaymentRefunded: [{ schema: PaymentRefunded, upcast: (d: z.infer<typeof PaymentRefunded>["data"]) => ({ ...d, initiated_by: "unknown" }) }] },
  );
  const toV2 = upcaster(registry);

  it.each(golden)("with a PaymentRefunded v2 and its upcaster, $source reads at v2, verifies its chains over the stored bytes and exports as stored", async ({ events }) => {
    const read = events.map((e) => toV2(structuredClone(e)));
    const refunds = read.filter((e) => e.type === "PaymentRefunded");
    for (const e of refunds) expect(v2.parse({ type: e.type, version: e.version, data: e.data })).toMatchObject({ version: 2, data: { initiated_by: "unknown" } });
    const byStream = new Map<string, RecordedEvent[]>();
    for (const e of read) byStream.set(e.stream, [...(byStream.get(e.stream) ?? []), e]);
    for (const [stream, list] of byStream) {
      expect(verifyChain(list), stream).toEqual([]);
    }
    // an upcast event whose stored bytes were edited still breaks the chain
    if (refunds.length) {
      const edited = read.map((e) => (e === refunds[0] ? toV2({ ...storedFormOf(e), data: { ...(storedFormOf(e).data as object), amount: "0.01" } }) : e));
      expect(verifyChain(edited.filter((e) => e.stream === refunds[0]!.stream)).map((f) => f.kind)).toContain("edited");
    }
    // the export of a store that reads at v2 writes what is stored
    const stored = eventsStore(events);
    const readingV2 = { ...stored, readAll: async (o?: Parameters<typeof stored.readAll>[0]) => (await stored.readAll(o)).map(toV2) };
    expect((await readingV2.readAll()).filter((e) => e.type === "PaymentRefunded").every((e) => e.version === 2)).toBe(true);
    const lines: string[] = [];
    for await (const line of exportEvents(readingV2)) lines.push(line);
    expect(lines.map((l) => JSON.parse(l))).toEqual([...events].sort((a, b) => a.position - b.position).map(({ stream, revision, position, id, type, version, data, metadata }) => ({ stream, revision, position, id, type, version, data, metadata })));
  });
});
