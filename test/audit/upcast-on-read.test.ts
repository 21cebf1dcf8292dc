// The stores upcast on read (issue 30): with a registry that knows a version 2 of an event (a
// test-only event type, so the machine is not involved), events stored at version 1 are read at
// version 2 by every store (memory, SQLite) and every read (readStream, readAll, subscriptions),
// while the stored bytes stay as they were: the chain verifies, `cardflow audit --all` is clean and
// `cardflow events export` writes version 1.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { verifyChain } from "../../src/audit/chain.js";
import { exportEvents } from "../../src/audit/transfer.js";
import { newEvents } from "../../src/events/new-events.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import type { EventStore, RecordedEvent } from "../../src/store/port.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { cardflow } from "./run-cli.js";

vi.mock("../../machines/event-versions.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../machines/event-versions.js")>();
  const { eventSchema } = await import("../../machines/events.js");
  const v1 = eventSchema("TestNoteAdded", z.object({ note: z.string() }));
  const v2 = eventSchema("TestNoteAdded", z.object({ note: z.string(), lang: z.string() }), 2);
  const registry = real.createEventRegistry([...real.CURRENT_SCHEMAS, v2], { ...real.EARLIER_VERSIONS, TestNoteAdded: [{ schema: v1, upcast: (d: { note: string }) => ({ ...d, lang: "en" }) }] });
  return { ...real, upcast: real.upcaster(registry) };
});

const dir = mkdtempSync(join(tmpdir(), "cardflow-upcast-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
const stored = (stream: string, prevHash: string | null, notes: string[]) =>
  newEvents(stream, prevHash, notes.map((note) => ({ type: "TestNoteAdded", version: 1, data: { note } })), { timestamp: "2026-01-01T00:00:00.000+00:00", request_id: 1 }, () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`);

async function writeOldEvents(store: EventStore) {
  const first = stored("note-1", null, ["a", "b"]);
  await store.append("note-1", first, { expectedRevision: "no_stream" });
  await store.append("note-1", stored("note-1", first[1]!.metadata.hash as string, ["c"]), { expectedRevision: 1 });
}

const atV2 = (events: RecordedEvent[]) => events.map((e) => [e.version, e.data]);
const expected = [
  [2, { note: "a", lang: "en" }],
  [2, { note: "b", lang: "en" }],
  [2, { note: "c", lang: "en" }],
];

describe.each([
  ["memory", () => ({ store: createMemoryStore(), close: async () => undefined })],
  [
    "SQLite",
    () => {
      const { events, readModels } = createSqliteStore({ path: join(dir, `store-${++n}.sqlite`) });
      return { store: events, close: async () => void (await Promise.all([events.close(), readModels.close()])) };
    },
  ],
] as const)("the %s store", (_name, open) => {
  it("reads events stored at version 1 at version 2 (streams, all, subscriptions), verifies them and exports them as stored", async () => {
    const { store, close } = open();
    try {
      await writeOldEvents(store);
      expect(atV2(await store.readStream("note-1"))).toEqual(expected);
      expect(atV2(await store.readAll())).toEqual(expected);
      const seen: RecordedEvent[] = [];
      const subscription = store.subscribeToAll({ after: 0 }, (e) => void seen.push(e));
      await vi.waitFor(() => expect(seen).toHaveLength(3));
      await subscription.close();
      expect(atV2(seen)).toEqual(expected);
      expect(verifyChain(await store.readStream("note-1"))).toEqual([]);
      const lines: string[] = [];
      for await (const line of exportEvents(store)) lines.push(line);
      expect(lines.map((l) => JSON.parse(l)).map((e: RecordedEvent) => [e.version, e.data])).toEqual([
        [1, { note: "a" }],
        [1, { note: "b" }],
        [1, { note: "c" }],
      ]);
    } finally {
      await close();
    }
  });
});

it("cardflow audit --all is clean over the upcast events and events export writes them as stored (SQLite)", async () => {
  const path = join(dir, "cli.sqlite");
  const { events, readModels } = createSqliteStore({ path });
  await writeOldEvents(events);
  await Promise.all([events.close(), readModels.close()]);
  const audited = await cardflow("audit", "--all", "--json", "--no-progress", "--store", `sqlite:${path}`);
  expect(audited.code, audited.out).toBe(0);
  expect(JSON.parse(audited.out)).toMatchObject({ streams: 1, events: 3, findings: [] });
  const exported = await cardflow("events", "export", "--store", `sqlite:${path}`);
  expect(exported.out.trim().split("\n").map((l) => JSON.parse(l).version)).toEqual([1, 1, 1]);
  // the export imports into another store, which reads it at version 2 again
  const jsonl = join(dir, "notes.jsonl");
  const { writeFileSync } = await import("node:fs");
  writeFileSync(jsonl, exported.out);
  const copy = join(dir, "imported.sqlite");
  expect((await cardflow("events", "import", jsonl, "--store", `sqlite:${copy}`)).code).toBe(0);
  const reopened = createSqliteStore({ path: copy });
  expect(atV2(await reopened.events.readStream("note-1"))).toEqual(expected);
  await Promise.all([reopened.events.close(), reopened.readModels.close()]);
});
