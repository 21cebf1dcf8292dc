// Golden streams (issue 30): every release's store, written by that release's code
// (scripts/golden-streams.ts, test/fixtures/streams/<release>/), opened by the CURRENT code. A copy
// of its SQLite files and a store imported from its JSONL export must both give the records and
// lists that release gave, a clean audit, valid hash chains and the same heads; the stored events
// are read back unchanged. Fixtures are never regenerated: a failure here is a break of the promise
// to read old stores (README "Upgrading and audit across versions"), to fix in the code.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { createEngine } from "../../src/engine.js";
import { presentPayment } from "../../src/present/api-versions.js";
import { createServer } from "../../src/http/server.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { createWebhooks } from "../../src/webhooks/index.js";
import { testDatabase } from "../support/postgres.js";
import { cardflow } from "./run-cli.js";

const ROOT = join(import.meta.dirname, "../fixtures/streams");
const releases = readdirSync(ROOT).filter((name) => /^v\d+\.\d+\.\d+$/.test(name));
const work = mkdtempSync(join(tmpdir(), "cardflow-golden-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Fixture {
  dir: string;
  manifest: { release: string; api_keys: Record<string, string>; flows: Record<string, { payment_id: string; external_account_id: string }>; events: number };
  records: Record<string, { payment_id: string; external_account_id: string; v1: unknown; v2: unknown }>;
  reads: { account: string; url: string; body: unknown }[];
  audit: { streams: number; payments: number; events: number; read_models: string; findings: unknown[] };
  heads: Record<string, string>;
  lines: Record<string, unknown>[];
}

function fixture(release: string): Fixture {
  const dir = join(ROOT, release);
  const json = (name: string) => JSON.parse(readFileSync(join(dir, name), "utf8"));
  const lines = readFileSync(join(dir, "events.jsonl"), "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as Record<string, unknown>);
  return { dir, manifest: json("manifest.json"), records: json("records.json"), reads: json("reads.json"), audit: json("audit.json"), heads: json("heads.json"), lines };
}

/** The release's records and lists, read by the current code from the store at `path` (HTTP routes, as a client reads them). */
async function readBack({ events, readModels }: Pick<ReturnType<typeof createSqliteStore>, "events" | "readModels">, f: Fixture) {
  const engine = createEngine({ store: events, readModels });
  const webhooks = createWebhooks({ engine });
  const app = createServer({ engine, apiKeys: createApiKeys(engine), webhooks });
  try {
    const get = async (account: string, url: string) => {
      const res = await app.inject({ method: "GET", url, headers: { authorization: `Bearer ${f.manifest.api_keys[account]}` } });
      return { status: res.statusCode, body: res.json() as unknown };
    };
    const records: Record<string, unknown> = {};
    for (const [flow, { payment_id, external_account_id }] of Object.entries(f.records)) {
      const v2 = await get(external_account_id, `/v2/payment/intent/${payment_id}?external_account_id=${external_account_id}`);
      expect(v2.status, `${flow}: GET /v2/payment/intent/${payment_id}`).toBe(200);
      const v1 = JSON.parse(JSON.stringify(presentPayment(await engine.getPayment({ external_account_id, payment_id }), "v1")));
      records[flow] = { payment_id, external_account_id, v1, v2: v2.body };
    }
    const reads = [];
    for (const { account, url } of f.reads) {
      const res = await get(account, url);
      expect(res.status, `GET ${url}`).toBe(200);
      // feed cursors are opaque since (issue 25): compared as the log position they stand for
      const body = res.body as { next_cursor?: string };
      if (typeof body.next_cursor === "string") body.next_cursor = String(webhooks.feed.cursors.decode(account, body.next_cursor));
      reads.push({ account, url, body });
      // a cursor the release gave (the position in digits), saved by a consumer before the upgrade, still reads on
      const recorded = (f.reads.find((r) => r.account === account && r.url === url) as { body?: { next_cursor?: unknown } } | undefined)?.body?.next_cursor;
      if (typeof recorded === "string" && /^[1-9]\d*$/.test(recorded) && url.startsWith("/v2/events?")) {
        const after = await get(account, `${url}${url.includes("?") ? "&" : "?"}after=${recorded}`);
        // the release's page held every event: after its cursor, nothing, as it was then
        expect([after.status, (after.body as { data: unknown[] }).data], `GET ${url}&after=${recorded} (a ${f.manifest.release} cursor)`).toEqual([200, []]);
      }
    }
    return { records, reads };
  } finally {
    await app.close();
    await engine.close();
  }
}

/** Each exported line as the fixture recorded it: the fields the fixture has, equal (an export may add fields, never change one). */
const asRecorded = (exported: string, recorded: Record<string, unknown>[]) =>
  exported
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l, i) => {
      const line = JSON.parse(l) as Record<string, unknown>;
      return Object.fromEntries(Object.keys(recorded[i] ?? line).map((k) => [k, line[k]]));
    });

it("holds the golden streams of v0.1.0 at least", () => {
  expect(releases).toContain("v0.1.0");
});

describe.each(releases)("golden streams of %s", (release) => {
  const f = fixture(release);
  const copy = join(work, release, "copy");
  cpSync(join(f.dir, "store"), copy, { recursive: true });
  const sqlite = `sqlite:${join(copy, "cardflow.sqlite")}`;

  it("the fixture is whole: every flow has its records, and the export has every event", () => {
    expect(Object.keys(f.records).sort()).toEqual(Object.keys(f.manifest.flows).sort());
    expect(f.lines).toHaveLength(f.manifest.events);
    expect(f.audit).toMatchObject({ events: f.manifest.events, findings: [] });
    expect(existsSync(join(f.dir, "store", "cardflow.sqlite")) && existsSync(join(f.dir, "store", "cardflow.read-models.sqlite"))).toBe(true);
  });

  it("its SQLite store, opened by the current code, gives the same records and lists", async () => {
    const got = await readBack(createSqliteStore({ path: join(copy, "cardflow.sqlite") }), f);
    for (const [flow, record] of Object.entries(f.records)) expect(got.records[flow], flow).toEqual(record);
    for (const [i, read] of f.reads.entries()) expect(got.reads[i], `GET ${read.url}`).toEqual(read);
  });

  it("its SQLite store audits clean, its chains verify to the same heads, its events read back unchanged", async () => {
    const audited = await cardflow("audit", "--all", "--json", "--no-progress", "--store", sqlite);
    expect(audited.code, audited.out + audited.err).toBe(0);
    expect(JSON.parse(audited.out)).toMatchObject({ ...f.audit, findings: [] });
    const heads = await cardflow("events", "heads", "--store", sqlite);
    expect(JSON.parse(heads.out)).toEqual(f.heads);
    // with the heads as anchors too: no stream was truncated or rewritten
    const anchors = join(work, release, "heads.json");
    cpSync(join(f.dir, "heads.json"), anchors);
    expect((await cardflow("audit", "--all", "--no-progress", "--anchors", anchors, "--store", sqlite)).code).toBe(0);
    const exported = await cardflow("events", "export", "--store", sqlite);
    expect(asRecorded(exported.out, f.lines)).toEqual(f.lines);
  });

  it("its JSONL export audits clean as it is, and imports into a new store that gives the same records, heads and audit", async () => {
    const jsonl = join(f.dir, "events.jsonl");
    const asIs = await cardflow("audit", "--all", "--json", "--no-progress", "--store", `jsonl:${jsonl}`);
    expect(asIs.code, asIs.out + asIs.err).toBe(0);
    expect(JSON.parse(asIs.out)).toMatchObject({ streams: f.audit.streams, payments: f.audit.payments, events: f.audit.events, findings: [] });

    const imported = join(work, release, "imported", "cardflow.sqlite");
    const done = await cardflow("events", "import", jsonl, "--store", `sqlite:${imported}`);
    expect(done.code, done.err).toBe(0);
    expect(JSON.parse((await cardflow("events", "heads", "--store", `sqlite:${imported}`)).out)).toEqual(f.heads);
    const audited = await cardflow("audit", "--all", "--json", "--no-progress", "--store", `sqlite:${imported}`);
    expect(audited.code, audited.out).toBe(0);
    expect(JSON.parse(audited.out)).toMatchObject({ ...f.audit, findings: [] });
    const got = await readBack(createSqliteStore({ path: imported }), f);
    for (const [flow, record] of Object.entries(f.records)) expect(got.records[flow], flow).toEqual(record);
    for (const [i, read] of f.reads.entries()) expect(got.reads[i], `GET ${read.url}`).toEqual(read);
  });

  // the read models and the webhook feed folded from an import in batches: an endpoint created,
  // failing and deleted within one batch gave PostgreSQL's upsert one key several times (refused)
  it("its JSONL export imports into PostgreSQL, which gives the same records, lists and heads", { timeout: 120_000 }, async () => {
    const database = await testDatabase();
    const done = await cardflow("events", "import", join(f.dir, "events.jsonl"), "--store", database);
    expect(done.code, done.err).toBe(0);
    expect(JSON.parse((await cardflow("events", "heads", "--store", database)).out)).toEqual(f.heads);
    const got = await readBack(await createPostgresStore({ connectionString: database }), f);
    for (const [flow, record] of Object.entries(f.records)) expect(got.records[flow], flow).toEqual(record);
    for (const [i, read] of f.reads.entries()) expect(got.reads[i], `GET ${read.url}`).toEqual(read);
  });
});
