// A read model's version: a change of its documents, columns or indexes rebuilds it from the
// events at start, with no manual step: a store written at another version (or by a release
// before versions, where payments and cards were documents) is prepared again and folded from
// zero by the runner's first catch-up.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { listPayments } from "../../projections/payment-list.js";
import { customerCardsProjection } from "../../projections/customer-cards.js";
import { paymentsProjection } from "../../projections/payments.js";
import { defineProjection } from "../../projections/projection.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { createProjectionRunner } from "../../projections/runner.js";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import { createMemoryReadModels, createMemoryStore } from "../../src/store/memory/index.js";
import { createSqliteStore, readModelsPath } from "../../src/store/sqlite/index.js";
import { createWebhooks } from "../../src/webhooks/index.js";
import { FEED, type FeedEntry } from "../../src/webhooks/feed.js";
import { openDurable } from "../store/processes/stores.js";
import { testDatabase } from "../support/postgres.js";

const event = (stream: string, n: number) => ({ id: `${stream}-${n}`, type: "t", version: 1, data: { n }, metadata: { timestamp: "2026-01-01T00:00:00.000+00:00", request_id: n } });

describe("read model versions", () => {
  it("a new version of a projection is folded again from zero by the first catch-up, with its new code", async () => {
    const store = createMemoryStore();
    for (let n = 0; n < 5; n++) await store.append(`s${n % 2}`, [event(`s${n % 2}`, n)], { expectedRevision: "any" });
    const readModels = createMemoryReadModels();
    const v1 = defineProjection<{ count: number }>({ name: "totals", keyOf: (e) => e.stream, apply: (d) => ({ count: (d?.count ?? 0) + 1 }) });
    await createProjectionRunner({ store, readModels, projections: [v1] }).catchUp();
    expect(await readModels.get("totals", "s0")).toEqual({ count: 3 });
    const v2 = defineProjection<{ sum: number }>({ name: "totals", version: 2, keyOf: (e) => e.stream, apply: (d, e) => ({ sum: (d?.sum ?? 0) + (e.data as { n: number }).n }) });
    expect(await createProjectionRunner({ store, readModels, projections: [v2] }).catchUp()).toBe(5);
    expect([await readModels.get("totals", "s0"), await readModels.get("totals", "s1")]).toEqual([{ sum: 6 }, { sum: 4 }]);
  });

  it.each(["sqlite", "postgres"] as const)("a read-model table dropped by hand is built again from the events at start, and lists answer (%s)", async (kind) => {
    const dir = mkdtempSync(join(tmpdir(), "cardflow-dropped-"));
    const spec = kind === "sqlite" ? ({ kind, path: join(dir, "cardflow.sqlite") } as const) : ({ kind, url: await testDatabase(), schema: `t_${randomUUID().replaceAll("-", "").slice(0, 12)}` } as const);
    try {
      const opened = await openDurable(spec);
      const before = createEngine({ store: opened.events, readModels: opened.readModels });
      await before.openAccount({ external_account_id: "acct", processor: "A" });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await before.createIntent({ external_account_id: "acct", amount: "5.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus" })).payment_id);
      await before.projections.catchUp();
      await before.close();
      const table = `rm_${paymentsProjection.name}`;
      if (spec.kind === "sqlite") {
        const rm = new Database(readModelsPath(spec.path));
        rm.exec(`DROP TABLE ${table}`);
        rm.close();
      } else {
        const c = new pg.Client({ connectionString: spec.url });
        await c.connect();
        await c.query(`DROP TABLE ${spec.schema}.${table}`);
        await c.end();
      }
      const reopened = await openDurable(spec);
      const after = createEngine({ store: reopened.events, readModels: reopened.readModels });
      try {
        await after.projections.caughtUp();
        const page = await listPayments(reopened.readModels, { external_account_id: "acct" }, { limit: 10 });
        expect(page.docs.map((d) => d.state.context.intent!.payment_id).sort()).toEqual([...ids].sort());
      } finally {
        await after.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("SQLite written by the release before (payments and cards as documents): the engine rebuilds them as tables at start, and lists answer", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cardflow-versions-"));
    try {
      const path = join(dir, "cardflow.sqlite");
      const opened = createSqliteStore({ path });
      const before = createEngine({ store: opened.events, readModels: opened.readModels, clock: manualClock(), ids: sequentialIds() });
      await before.openAccount({ external_account_id: "acct", processor: "A" });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await before.createIntent({ external_account_id: "acct", amount: "5.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus" })).payment_id);
      await before.projections.catchUp();
      await before.close();
      // what the release before left: documents in the shared table under the earlier names, no versions, no tables
      const rm = new Database(readModelsPath(path));
      rm.exec(`DROP TABLE rm_${paymentsProjection.name}; DROP TABLE rm_${customerCardsProjection.name}; DELETE FROM read_model_versions`);
      const head = rm.prepare("SELECT position FROM checkpoints WHERE projection = ?").pluck().get(paymentsProjection.name) as number;
      rm.prepare("DELETE FROM checkpoints WHERE projection IN (?, ?)").run(paymentsProjection.name, customerCardsProjection.name);
      rm.prepare("INSERT INTO checkpoints (projection, position) VALUES ('payment_states', ?), ('customer_cards', ?)").run(head, head);
      const putDoc = rm.prepare("INSERT INTO read_models (projection, key, doc) VALUES ('payment_states', ?, '{\"old\":true}')");
      for (const id of ids) putDoc.run(id);
      rm.close();

      const reopened = createSqliteStore({ path });
      const after = createEngine({ store: reopened.events, readModels: reopened.readModels });
      await after.projections.caughtUp();
      const page = await listPayments(reopened.readModels, { external_account_id: "acct" }, { limit: 10 });
      expect(page.docs.map((d) => d.state.context.intent!.payment_id).sort()).toEqual([...ids].sort());
      expect(await reopened.readModels.checkpoint(paymentsProjection.name)).toBeGreaterThanOrEqual(head);
      await after.close();
      const check = new Database(readModelsPath(path), { readonly: true });
      // the earlier names retired: their documents and checkpoints gone
      for (const retired of ["payment_states", "customer_cards"]) {
        expect(check.prepare("SELECT count(*) FROM read_models WHERE projection = ?").pluck().get(retired), retired).toBe(0);
        expect(check.prepare("SELECT count(*) FROM checkpoints WHERE projection = ?").pluck().get(retired), retired).toBe(0);
      }
      expect(check.prepare("SELECT projection, version FROM read_model_versions ORDER BY projection").all()).toEqual(
        PROJECTIONS.map((p) => ({ projection: p.name, version: p.version ?? 1 })).sort((a, b) => (a.projection < b.projection ? -1 : 1)),
      );
      check.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the event feed of release 0.1.0 (three documents per public event) is folded again into its table at start: the same entries in every order, the retired documents gone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cardflow-versions-"));
    try {
      cpSync(new URL("../fixtures/streams/v0.1.0/store", import.meta.url).pathname, dir, { recursive: true });
      const path = join(dir, "cardflow.sqlite");
      const old = new Database(readModelsPath(path), { readonly: true });
      const docs = old.prepare("SELECT key, doc FROM read_models WHERE projection = 'public_events' ORDER BY key").all() as { key: string; doc: string }[];
      old.close();
      const inOrder = (prefix: string) => docs.filter((d) => d.key.startsWith(prefix)).map((d) => JSON.parse(d.doc) as FeedEntry);
      const all = inOrder("all/");
      expect(all.length).toBeGreaterThan(50);

      const { events, readModels } = createSqliteStore({ path });
      const engine = createEngine({ store: events, readModels });
      const { feed } = createWebhooks({ engine });
      try {
        await feed.catchUp();
        expect(await feed.entries("all", 0, 10_000)).toEqual(all);
        const accounts = [...new Set(all.map((e) => e.event.external_account_id))];
        const payments = [...new Set(all.flatMap((e) => (e.event.payment_id ? [e.event.payment_id] : [])))];
        expect(accounts.length).toBeGreaterThan(1);
        for (const account of accounts) expect(await feed.entries({ account }, 0, 10_000)).toEqual(inOrder(`acct/${account}/`));
        const accountOf = (payment_id: string) => all.find((e) => e.event.payment_id === payment_id)!.event.external_account_id;
        for (const payment_id of payments) expect(await feed.entries({ account: accountOf(payment_id), payment_id }, 0, 10_000)).toEqual(inOrder(`pay/${payment_id}/`));
        // a page starts after its position, as before
        expect(await feed.entries("all", all[9]!.position, 5)).toEqual(all.slice(10, 15));
      } finally {
        await engine.close();
      }
      const check = new Database(readModelsPath(path), { readonly: true });
      // the retired names' documents and checkpoints are gone (RETIRED_PROJECTIONS)
      for (const retired of ["public_events", "public_event_streams", "webhook_endpoints"]) {
        expect(check.prepare("SELECT count(*) FROM read_models WHERE projection = ?").pluck().get(retired), retired).toBe(0);
        expect(check.prepare("SELECT count(*) FROM checkpoints WHERE projection = ?").pluck().get(retired), retired).toBe(0);
      }
      expect(check.prepare(`SELECT count(*) FROM rm_${FEED.events}`).pluck().get()).toBe(all.length);
      check.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
