// The API's lists (runner.fresh) on SQLite are told once the batch holding their position is
// posted to the read models' committer, not once it committed: while another connection holds the
// read models' write lock, a payment created a moment ago is in the list (its document under way),
// and what the runner could not commit is committed once the lock is gone. Reads waiting for what
// is stored (caughtUp) still wait for it.
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listPayments } from "../../projections/payment-list.js";
import { paymentsProjection } from "../../projections/payments.js";
import { createEngine } from "../../src/engine.js";
import { createSqliteStore, readModelsPath } from "../../src/store/sqlite/index.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-fresh-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("fresh reads on SQLite", () => {
  it("answer the documents of a batch whose commit waits for another connection's lock", { timeout: 30_000 }, async () => {
    const path = join(dir, "c.db");
    const { events, readModels } = createSqliteStore({ path, busyTimeoutMs: 10_000 });
    const engine = createEngine({ store: events, readModels, liveProjections: true });
    const ids = () => listPayments(engine.projections.fresh, { external_account_id: "acct_f" }, { limit: 10 }).then((p) => p.docs.map((d) => d.state.context.intent!.payment_id));
    try {
      await engine.openAccount({ external_account_id: "acct_f", processor: "B" });
      const intent = { external_account_id: "acct_f", amount: "1.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_f" } as const;
      const first = (await engine.createIntent(intent)).payment_id;
      expect(await ids()).toEqual([first]);
      // committed before the lock is taken (a catch-up whose commit waits for the lock holds the next one back)
      await engine.projections.caughtUp();

      const other = new Database(readModelsPath(path));
      other.exec("BEGIN IMMEDIATE");
      try {
        const second = (await engine.createIntent(intent)).payment_id;
        expect(await ids()).toEqual([second, first]);
        // not committed: another connection sees only the first; a read of what is stored waits
        expect(other.prepare(`SELECT count(*) FROM rm_${paymentsProjection.name}`).pluck().get()).toBe(1);
        await expect(engine.projections.caughtUp({ timeoutMs: 300 })).rejects.toMatchObject({ code: "read_model_behind" });
      } finally {
        other.exec("ROLLBACK");
        other.close();
      }
      await engine.projections.caughtUp();
      expect(await readModels.count(paymentsProjection.name)).toBe(2);
    } finally {
      await engine.close();
    }
  });
});
