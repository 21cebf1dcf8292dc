import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createProjectionRunner } from "../../projections/runner.js";
import Database from "better-sqlite3";
import pg from "pg";
import { paymentsProjection, type PaymentDoc } from "../../projections/payments.js";
import { audit, auditAll, streamHeads } from "../../src/audit/audit.js";
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

describe("a table read model's index columns edited by hand, its document left (SQLite and PostgreSQL)", () => {
  // a probe: `update rm_payment_states_v4 set status='canceled'` listed a succeeded payment under
  // ?status=canceled, and audit --all said the read models equal a fresh replay (it compared documents only)
  for (const kind of ["SQLite", "PostgreSQL"] as const) {
    it(`${kind}: a read_model_mismatch naming the column, in audit and audit --all`, { timeout: 60_000 }, async () => {
      // the flows run on SQLite (as above), imported into PostgreSQL
      const ran = sqlite("columns");
      const { engine, payments } = await runFlows({ store: ran.events, readModels: ran.readModels });
      await engine.projections.stop();
      const s = kind === "SQLite" ? ran : await postgres("audit_columns");
      if (s !== ran) {
        await importEvents(s.events, await lines(ran.events));
        await readModelsOf(s);
      }
      const id = payments.terminal_manual!;
      const source = { store: s.events, readModels: s.readModels };
      expect((await auditAll(source)).read_models).toBe("equal");
      const table = `rm_${paymentsProjection.name}`;
      const sql = async (statement: string, params: string[]) => {
        if (kind === "SQLite") {
          const db = new Database(join(dir, "columns.read-models.db"));
          db.prepare(statement.replace(/\$\d/g, "?")).run(...params);
          db.close();
        } else {
          const client = new pg.Client({ connectionString: database });
          await client.connect();
          await client.query("SET search_path TO audit_columns");
          await client.query(statement, params);
          await client.end();
        }
      };
      await sql(`UPDATE ${table} SET status = $1 WHERE key = $2`, ["canceled", id]);
      // the lists read the column: the payment is listed as canceled
      const account = (await s.readModels.get<PaymentDoc>(paymentsProjection.name, id))!.state.context.intent!.external_account_id;
      const listed = await s.readModels.query<PaymentDoc>(paymentsProjection.name, { where: { account, status: "canceled" }, order: ["created", "key"], direction: "desc", limit: 100 });
      expect(listed.map((d) => d.state.context.intent!.payment_id)).toContain(id);
      const finding = {
        kind: "read_model_mismatch",
        subject: `read_model:${paymentsProjection.name}`,
        message: `read model ${paymentsProjection.name}: document ${id}'s column status is "canceled", a fresh replay of its events gives "succeeded" (its lists select on it)`,
      };
      expect(await auditAll(source)).toMatchObject({ read_models: "differ", findings: [finding] });
      expect(await audit(source, id)).toMatchObject({ read_models: "differ", findings: [finding] });
      await sql(`UPDATE ${table} SET status = $1 WHERE key = $2`, ["succeeded", id]);
      expect(await auditAll(source)).toMatchObject({ read_models: "equal", findings: [] });
    });
  }
});

describe("a read model's document that is not JSON (edited in SQLite)", () => {
  it("is a read_model_mismatch naming it, in audit and audit --all, which read on past it (they stopped at a JSON error naming nothing)", async () => {
    const s = sqlite("unreadable");
    const { engine, payments } = await runFlows({ store: s.events, readModels: s.readModels });
    await engine.projections.stop();
    const id = payments.terminal_manual!;
    const source = { store: s.events, readModels: s.readModels };
    expect((await auditAll(source)).read_models).toBe("equal");
    const db = new Database(join(dir, "unreadable.read-models.db"));
    db.prepare(`UPDATE rm_${paymentsProjection.name} SET doc = '{oops' WHERE key = ?`).run(id);
    db.close();
    const finding = { kind: "read_model_mismatch", subject: `read_model:${paymentsProjection.name}`, message: expect.stringMatching(new RegExp(`^read model ${paymentsProjection.name}: document ${id} cannot be read: it is not JSON \\(`)) };
    expect(await auditAll(source)).toMatchObject({ read_models: "differ", findings: [finding] });
    expect(await audit(source, id)).toMatchObject({ read_models: "differ", findings: [finding] });
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
    expect({ code: again.code, err: withoutStoreLine(again.err) }).toEqual({ code: 0, err: `imported ${file.length - 100} events in ${rest} streams (100 events of the file were in the store already)\n` });
    const audited = await cardflow("audit", "--all", "--anchors", join(golden, "heads.json"), "--store", store);
    expect(audited.out).toContain(`audited ${file.length} events`);
    expect(audited.code).toBe(0);
  });
});
