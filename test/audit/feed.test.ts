// `audit --all` compares the webhook feed's read models too, where the store keeps a feed (a
// service with webhooks folded it): each public event's entry, each stream's fold state, each
// endpoint, against the audit's own fold of that stream; and none is left that no event explains.
import Database from "better-sqlite3";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine.js";
import { createSqliteStore, readModelsPath } from "../../src/store/sqlite/index.js";
import { FEED, feedKey } from "../../src/webhooks/feed.js";
import { createWebhooks, type Webhooks } from "../../src/webhooks/index.js";
import { feedAudit } from "../../src/webhooks/feed-audit.js";
import { auditAll } from "../../src/audit/audit.js";
import { catchUpReadModels } from "../../src/audit/read-models.js";
import { createMemoryReadModels, createMemoryStore } from "../../src/store/memory/index.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { testDatabase } from "../support/postgres.js";
import { runFlows } from "./flows.js";
import { cardflow } from "./run-cli.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-audit-feed-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  process.exitCode = undefined;
});

/** A store written by a service with webhooks: payments and an endpoint, the feed caught up; the read models' file. */
async function storeWithFeed(name: string) {
  const path = join(dir, name, "cardflow.sqlite");
  const { events, readModels } = createSqliteStore({ path });
  const engine = createEngine({ store: events, readModels });
  const webhooks = createWebhooks({ engine });
  await engine.openAccount({ external_account_id: "acct_feed", processor: "B" });
  await webhooks.createEndpoint({ external_account_id: "acct_feed", url: "https://hooks.example.com/a" });
  for (const amount of ["1.00", "2.00"]) {
    const { payment_id } = await engine.createIntent({ external_account_id: "acct_feed", amount, payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
    await engine.authorize({ external_account_id: "acct_feed", payment_id });
  }
  await webhooks.feed.catchUp();
  await engine.close();
  return { path, rm: readModelsPath(path) };
}

const audited = async (path: string) => {
  const { out, code } = await cardflow("audit", "--all", "--json", "--no-progress", "--store", `sqlite:${path}`);
  return { code, report: JSON.parse(out) as { read_models: string; findings: Array<{ kind: string; subject: string; message: string }> } };
};

it("a store whose feed matches its events: equal; behind them, caught up first as the service would (--no-catch-up: behind)", async () => {
  const { path } = await storeWithFeed("clean");
  expect(await audited(path)).toMatchObject({ code: 0, report: { read_models: "equal", findings: [] } });
  // a payment made by a process without webhooks: the feed does not hold it yet
  const { events, readModels } = createSqliteStore({ path });
  const engine = createEngine({ store: events, readModels });
  await engine.createIntent({ external_account_id: "acct_feed", amount: "3.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
  await engine.projections.caughtUp();
  await engine.close();
  const { out } = await cardflow("audit", "--all", "--json", "--no-progress", "--no-catch-up", "--store", `sqlite:${path}`);
  expect((JSON.parse(out) as { findings: Array<{ kind: string; subject: string }> }).findings.map((f) => [f.kind, f.subject])).toEqual(Object.values(FEED).map((name) => ["read_model_behind", `read_model:${name}`]));
  expect(await audited(path)).toMatchObject({ code: 0, report: { read_models: "equal", findings: [] } });
});

it("an edited feed entry, a feed stream's state removed, an entry no event explains: each a finding", async () => {
  const { path, rm } = await storeWithFeed("tampered");
  const db = new Database(rm);
  const entries = db.prepare(`SELECT key, doc FROM rm_${FEED.events} ORDER BY key`).all() as Array<{ key: string; doc: string }>;
  expect(entries.length).toBe(4); // created and requires_capture, twice
  const edited = entries[1]!;
  db.prepare(`UPDATE rm_${FEED.events} SET doc = ? WHERE key = ?`).run(edited.doc.replace('"amount":"1.00"', '"amount":"9.00"'), edited.key);
  const stream = (db.prepare("SELECT key FROM read_models WHERE projection = ? ORDER BY key").all(FEED.streams) as Array<{ key: string }>)[0]!.key;
  db.prepare("DELETE FROM read_models WHERE projection = ? AND key = ?").run(FEED.streams, stream);
  const extra = feedKey(1);
  db.prepare(`INSERT INTO rm_${FEED.events} (key, doc, account, payment_id) SELECT ?, doc, account, payment_id FROM rm_${FEED.events} WHERE key = ?`).run(extra, edited.key);
  db.close();

  const { code, report } = await audited(path);
  expect(code).toBe(1);
  expect(report.read_models).toBe("differ");
  expect(report.findings).toEqual(
    expect.arrayContaining([
      { kind: "read_model_mismatch", subject: `read_model:${FEED.events}`, message: `read model ${FEED.events}: document ${edited.key} differs from a fresh replay of its events` },
      { kind: "read_model_missing", subject: `read_model:${FEED.streams}`, message: `read model ${FEED.streams} has no document ${stream}` },
      { kind: "read_model_mismatch", subject: `read_model:${FEED.events}`, message: `read model ${FEED.events} has 1 document(s) no event explains: ${extra}` },
    ]),
  );
  expect(report.findings).toHaveLength(3);
});

it("a feed checkpoint reset by hand does not turn the comparison off: the feed is behind, and only that is said (not documents no event explains)", async () => {
  const { path, rm } = await storeWithFeed("reset");
  const db = new Database(rm);
  db.prepare("UPDATE checkpoints SET position = 0 WHERE projection = ?").run(FEED.events);
  db.prepare("UPDATE read_models SET doc = json_set(doc, '$.url', 'https://evil.example/') WHERE projection = ?").run(FEED.endpoints);
  db.close();
  for (const catchUp of [[], ["--no-catch-up"]]) {
    const { out, code } = await cardflow("audit", "--all", "--json", "--no-progress", ...catchUp, "--store", `sqlite:${path}`);
    expect(code).toBe(1);
    const { findings } = JSON.parse(out) as { findings: Array<{ kind: string; subject: string }> };
    expect(findings.map((f) => [f.kind, f.subject])).toEqual([["read_model_behind", `read_model:${FEED.events}`]]);
  }
});

describe.each(["memory", "sqlite"] as const)("the library's auditAll({ feed: feedAudit }) on %s", (kind) => {
  it("finds every flow's feed documents equal to its own fold", { timeout: 60_000 }, async () => {
    const stores =
      kind === "memory"
        ? { events: createMemoryStore(), readModels: createMemoryReadModels() }
        : createSqliteStore({ path: join(dir, "flows", "cardflow.sqlite") });
    let webhooks: Webhooks | undefined;
    const { engine } = await runFlows({ store: stores.events, readModels: stores.readModels }, async (engine) => {
      webhooks = createWebhooks({ engine });
      await webhooks.createEndpoint({ external_account_id: "acct_a", url: "https://hooks.example.com/flows" });
    });
    await webhooks!.feed.catchUp();
    await catchUpReadModels({ store: stores.events, readModels: stores.readModels }, feedAudit);
    const report = await auditAll({ store: stores.events, readModels: stores.readModels }, { feed: feedAudit });
    expect(await stores.readModels.count(FEED.events)).toBeGreaterThan(20);
    expect([report.read_models, report.findings]).toEqual(["equal", []]);
    // without it (the library's default): the feed is not compared, the rest is
    expect((await auditAll({ store: stores.events, readModels: stores.readModels })).read_models).toBe("equal");
    await engine.close();
    await Promise.all([stores.events.close(), stores.readModels.close()]);
  });
});

it("on PostgreSQL: a feed that matches its events is equal (its documents as PostgreSQL gives them back)", { timeout: 60_000 }, async () => {
  const stores = await createPostgresStore({ connectionString: await testDatabase(), schema: `audit_feed_${randomUUID().replaceAll("-", "").slice(0, 12)}` });
  const engine = createEngine({ store: stores.events, readModels: stores.readModels });
  const webhooks = createWebhooks({ engine });
  await engine.openAccount({ external_account_id: "acct_pg", processor: "B" });
  await webhooks.createEndpoint({ external_account_id: "acct_pg", url: "https://hooks.example.com/pg", event_types: ["payment_intent.succeeded"] });
  for (const amount of ["1.00", "2.50"]) {
    const ref = { external_account_id: "acct_pg", payment_id: (await engine.createIntent({ external_account_id: "acct_pg", amount, payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" })).payment_id };
    await engine.authorize(ref);
    await engine.capture({ ...ref, amount });
    await engine.refund({ ...ref, amount: "0.50" });
  }
  await webhooks.feed.catchUp();
  const report = await auditAll({ store: stores.events, readModels: stores.readModels }, { feed: feedAudit });
  expect(await stores.readModels.count(FEED.events)).toBeGreaterThanOrEqual(8);
  expect([report.read_models, report.findings]).toEqual(["equal", []]);
  await engine.close();
  await Promise.all([stores.events.close(), stores.readModels.close()]);
});
