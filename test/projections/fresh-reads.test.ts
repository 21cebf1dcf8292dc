// The API's lists (runner.fresh) on SQLite are told once the batch holding their position is
// posted to the read models' committer, not once it committed: while another connection holds the
// read models' write lock, a payment created a moment ago is in the list (its document under way),
// and what the runner could not commit is committed once the lock is gone. Reads waiting for what
// is stored (caughtUp) still wait for it. A batch the read models refuse at its commit's call
// (another process's read models moved on meanwhile) is never taken as posted.
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listPayments } from "../../projections/payment-list.js";
import { paymentsProjection } from "../../projections/payments.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { createProjectionRunner } from "../../projections/runner.js";
import type { ReadModelStore } from "../../src/store/port.js";
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

  it("never answer a batch whose commit was refused at its call because another process's read models moved on", { timeout: 30_000 }, async () => {
    // Two processes on one file: A writes and projects; B's projector reads the checkpoints at the
    // payment's creation, and while it folds the authorization A's projector commits a part of it
    // (A had read the log only that far). B's commit is refused at its call (the checkpoint moved):
    // its documents were never answered, so B's list must wait for what is stored, not take the
    // batch as posted and answer the part A stored (the payment not yet requires_capture).
    const path = join(dir, "two.db");
    const a = createSqliteStore({ path, busyTimeoutMs: 10_000 });
    const b = createSqliteStore({ path, busyTimeoutMs: 10_000 });
    const engine = createEngine({ store: a.events, readModels: a.readModels });
    let seenByA = Infinity;
    const runnerA = createProjectionRunner({
      store: { ...a.events, readAll: async (options) => (await a.events.readAll(options)).filter((e) => e.position <= seenByA) },
      readModels: a.readModels,
      projections: PROJECTIONS,
    });
    let beforeFold: (() => Promise<unknown>) | undefined;
    const readModelsB: ReadModelStore = Object.create(b.readModels, {
      getMany: {
        value: async (...args: Parameters<ReadModelStore["getMany"]>) => {
          const docs = await b.readModels.getMany(...args);
          const once = beforeFold;
          beforeFold = undefined;
          await once?.();
          return docs;
        },
      },
    });
    const runnerB = createProjectionRunner({ store: b.events, readModels: readModelsB, projections: PROJECTIONS });
    try {
      await engine.openAccount({ external_account_id: "acct_r", processor: "B" });
      const intent = { external_account_id: "acct_r", amount: "1.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_r" } as const;
      const { payment_id } = await engine.createIntent(intent);
      const created = await a.events.head();
      await runnerA.catchUp();
      await runnerB.catchUp();
      expect((await engine.authorize({ external_account_id: "acct_r", payment_id })).status).toBe("requires_capture");
      const authorized = await a.events.head();
      expect(authorized - created).toBeGreaterThan(1); // the authorization is more than one event: A stores a part
      seenByA = created + 1;
      beforeFold = () => runnerA.catchUp();
      const listed = await listPayments(runnerB.fresh, { external_account_id: "acct_r", status: "requires_capture" }, { limit: 10 });
      expect(beforeFold).toBeUndefined(); // A's commit came in the middle of B's fold
      expect(await a.readModels.checkpoint(paymentsProjection.name)).toBeGreaterThanOrEqual(created + 1);
      expect(listed.docs.map((d) => d.state.context.intent!.payment_id)).toEqual([payment_id]);
    } finally {
      await engine.close();
      await b.readModels.close();
      await b.events.close();
    }
  });
});
