// A catch-up from zero on SQLite (a bulk window: more than a batch to fold) fills an empty table
// without its secondary indexes and makes them at the end (src/store/sqlite/tables.ts
// withoutIndexes); a window that died before that leaves the table without them, and the next
// prepare() makes them again.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { paymentsProjection } from "../../projections/payments.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { createProjectionRunner } from "../../projections/runner.js";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import { createMemoryReadModels } from "../../src/store/memory/index.js";
import { createSqliteStore, readModelsPath } from "../../src/store/sqlite/index.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-rebuild-indexes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const path = join(dir, "cardflow.sqlite");
const table = `rm_${paymentsProjection.name}`;
const indexCount = () => {
  const db = new Database(readModelsPath(path), { readonly: true });
  try {
    return db.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL").pluck().get(table) as number;
  } finally {
    db.close();
  }
};

describe("a rebuild from zero on SQLite", () => {
  it("fills the empty table without its indexes, makes them at the end, and reaches what a fresh fold reaches", { timeout: 60_000 }, async () => {
    const { events, readModels } = createSqliteStore({ path });
    const engine = createEngine({ store: events, readModels, clock: manualClock(), ids: sequentialIds() });
    await engine.openAccount({ external_account_id: "acct", processor: "A" });
    for (let i = 0; i < 1_200; i++) await engine.createIntent({ external_account_id: "acct", amount: "5.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus" });
    await engine.projections.catchUp();
    const all = paymentsProjection.table!.indexes.length;
    expect(indexCount()).toBe(all);

    const during: number[] = [];
    const commitBatch = readModels.commitBatch.bind(readModels);
    readModels.commitBatch = async (commits) => (during.push(indexCount()), commitBatch(commits));
    await engine.projections.rebuild(paymentsProjection.name);
    readModels.commitBatch = commitBatch;
    expect(during.length).toBeGreaterThan(1);
    expect(new Set(during)).toEqual(new Set([0]));
    expect(indexCount()).toBe(all);

    const fresh = createMemoryReadModels();
    await createProjectionRunner({ store: events, readModels: fresh, projections: PROJECTIONS }).catchUp();
    expect(await readModels.list(paymentsProjection.name, "")).toEqual(await fresh.list(paymentsProjection.name, ""));
    await engine.close();
  });

  it("a window that died before making them (its indexes missing): the next prepare makes them again", async () => {
    const db = new Database(readModelsPath(path));
    for (const { name } of db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL").all(table) as { name: string }[]) db.exec(`DROP INDEX ${name}`);
    db.close();
    expect(indexCount()).toBe(0);
    const { events, readModels } = createSqliteStore({ path });
    await createProjectionRunner({ store: events, readModels, projections: PROJECTIONS }).ready();
    expect(indexCount()).toBe(paymentsProjection.table!.indexes.length);
    await readModels.close();
    await events.close();
  });
});
