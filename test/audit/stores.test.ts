import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createProjectionRunner } from "../../projections/runner.js";
import { auditAll, streamHeads } from "../../src/audit/audit.js";
import { canonicalJson } from "../../src/events/canonical-json.js";
import { exportEvents, importEvents } from "../../src/audit/transfer.js";
import { PROJECTIONS } from "../../projections/registry.js";
import type { EventStore, ReadModelStore } from "../../src/store/port.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { testDatabase } from "../support/postgres.js";
import { runFlows } from "./flows.js";
import { cardflow, withoutStoreLine } from "./run-cli.js";

const database = await testDatabase();
const dir = await mkdtemp(join(tmpdir(), "cardflow-audit-stores-"));
const opened: { events: EventStore; readModels: ReadModelStore }[] = [];
afterAll(async () => {
  for (const s of opened) await Promise.all([s.events.close(), s.readModels.close()]);
  await rm(dir, { recursive: true, force: true });
});

const sqlite = (name: string) => {
  const s = createSqliteStore({ path: join(dir, `${name}.db`) });
  opened.push(s);
  return s;
};
const postgres = async (schema: string) => {
  const s = await createPostgresStore({ connectionString: database, schema });
  opened.push(s);
  return s;
};

async function lines(store: EventStore): Promise<string[]> {
  const out: string[] = [];
  for await (const l of exportEvents(store)) out.push(l);
  return out;
}

/** Every document of every projection after catching up: what the service would read. */
async function readModelsOf({ events, readModels }: { events: EventStore; readModels: ReadModelStore }) {
  await createProjectionRunner({ store: events, readModels, projections: PROJECTIONS }).catchUp();
  return Object.fromEntries(await Promise.all(PROJECTIONS.map(async (p) => [p.name, canonicalJson(await readModels.list(p.name, ""))] as const)));
}

describe("export -> import between SQLite and PostgreSQL", () => {
  it("SQLite -> PostgreSQL -> SQLite gives identical streams, read models and audits", async () => {
    const source = sqlite("source");
    const { engine } = await runFlows({ store: source.events, readModels: source.readModels });
    await engine.projections.stop();
    const exported = await lines(source.events);
    expect(exported.length).toBeGreaterThan(40);

    const pg = await postgres("audit_roundtrip");
    await importEvents(pg.events, exported);
    expect(await pg.events.readAll()).toEqual(await source.events.readAll());
    expect(await readModelsOf(pg)).toEqual(await readModelsOf(source));

    const back = sqlite("back");
    await importEvents(back.events, await lines(pg.events));
    expect(await lines(back.events)).toEqual(exported);
    expect(await readModelsOf(back)).toEqual(await readModelsOf(source));

    for (const s of [source, pg, back]) {
      const report = await auditAll({ store: s.events, readModels: s.readModels });
      expect(report.findings).toEqual([]);
      expect(report.read_models).toBe("equal");
    }
  });
});

describe("the CLI on SQLite and PostgreSQL", () => {
  it("cardflow events export --store sqlite:... | events import --store postgres:..., then audits", async () => {
    const path = join(dir, "cli.db");
    const source = sqlite("cli");
    const { engine, payments } = await runFlows({ store: source.events, readModels: source.readModels });
    await engine.projections.stop();
    const exported = await cardflow("events", "export", "--store", `sqlite:${path}`);
    expect(exported.code).toBe(0);
    const file = join(dir, "cli.jsonl");
    await writeFile(file, exported.out);
    expect(await cardflow("events", "import", file, "--store", database)).toMatchObject({ code: 0, err: expect.stringMatching(/^cardflow: store: PostgreSQL postgres:\/\/.*\nimported 69 events in 16 streams\n$/) });
    const all = await cardflow("audit", "--all", "--store", `postgres:${database}`);
    expect(all.out).toContain("read models: equal to a fresh replay");
    expect(all).toMatchObject({ code: 0 });
    const one = await cardflow("audit", payments.reader_manual!, "--store", `sqlite:${path}`);
    expect(one.out).toContain("read models: equal to a fresh replay");
    expect(one.out).toContain("findings: none");
    expect((await cardflow("replay", "--json", "--store", `postgres:${database}`)).out).toContain('"payments": 11');
  });
});

describe("import into a SQLite or PostgreSQL store that holds part of the file", () => {
  const golden = new URL("../fixtures/streams/v0.1.0/", import.meta.url).pathname;
  const file = readFileSync(join(golden, "events.jsonl"), "utf8").trim().split("\n");
  const heads = JSON.parse(readFileSync(join(golden, "heads.json"), "utf8")) as Record<string, string>;
  /** The streams with events past the file's first 100: those an import after those appends to. */
  const rest = new Set(file.slice(100).map((l) => (JSON.parse(l) as { stream: string }).stream)).size;
  const highest = Math.max(...file.map((l) => (JSON.parse(l) as { metadata: { request_id: number } }).metadata.request_id));

  for (const [kind, open] of [["SQLite", () => sqlite("overlap")], ["PostgreSQL", () => postgres("audit_overlap")]] as const) {
    it(`${kind}: appends the events past what each stream holds, ends with the file's heads, and request ids go on past the file's`, { timeout: 60_000 }, async () => {
      const s = await open();
      expect(await importEvents(s.events, file.slice(0, 100))).toMatchObject({ events: 100, already: 0 });
      expect(await importEvents(s.events, file)).toEqual({ streams: rest, events: file.length, already: 100 });
      expect(await s.events.readAll()).toHaveLength(file.length);
      expect(await streamHeads(s.events)).toEqual(heads);
      expect((await auditAll({ store: s.events }, { anchors: heads })).findings).toEqual([]);
      expect(await s.events.reserveIds("request_id", 1)).toBe(highest + 1);
    });
  }

  it("the CLI says how many it appended and how many were there", async () => {
    const first = join(dir, "first100.jsonl");
    await writeFile(first, file.slice(0, 100).join("\n") + "\n");
    const store = `sqlite:${join(dir, "overlap-cli", "cardflow.sqlite")}`;
    expect(withoutStoreLine((await cardflow("events", "import", first, "--store", store)).err)).toBe("imported 100 events in 24 streams\n");
    const again = await cardflow("events", "import", join(golden, "events.jsonl"), "--store", store);
    expect({ code: again.code, err: withoutStoreLine(again.err) }).toEqual({ code: 0, err: `imported ${file.length - 100} events in ${rest} streams (100 of the file's events were in the store already)\n` });
    const audited = await cardflow("audit", "--all", "--anchors", join(golden, "heads.json"), "--store", store);
    expect(audited.out).toContain(`audited ${file.length} events`);
    expect(audited.code).toBe(0);
  });
});
