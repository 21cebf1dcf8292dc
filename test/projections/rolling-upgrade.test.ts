// A rolling upgrade: processes of release 0.1.0 (which kept payments and cards as documents under
// the names `payment_states` and `customer_cards`) and of this one (`payment_states_v4`, `customer_cards_v3`,
// the earlier names retired) fold one store at once, their catch-ups interleaved and concurrent
// while payments are written. Each release's read models end equal to a fresh fold of every event:
// neither moves a checkpoint the other relies on past events it did not fold (what a version bump
// under a shared name did: projections/projection.ts). One handle of the store per release, as two
// processes would hold.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { apiKeysProjection } from "../../projections/api-keys.js";
import { customerCardsProjection } from "../../projections/customer-cards.js";
import { paymentDeliveriesProjection } from "../../projections/payment-deliveries.js";
import { paymentsProjection } from "../../projections/payments.js";
import type { Projection } from "../../projections/projection.js";
import { PROJECTIONS, RETIRED_PROJECTIONS } from "../../projections/registry.js";
import { createProjectionRunner } from "../../projections/runner.js";
import { terminalsProjection } from "../../projections/terminals.js";
import { createEngine } from "../../src/engine.js";
import { createMemoryReadModels } from "../../src/store/memory/index.js";
import type { EventStore, ReadModelStore } from "../../src/store/port.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { testDatabase } from "../support/postgres.js";

/** As release 0.1.0 kept them: payments and cards as documents under the earlier names (the same folds). */
const documents = <T,>({ table: _table, version: _version, ...fold }: Projection<T>, name: string): Projection<T> => ({ ...fold, name });
const BEFORE: Projection<any>[] = [documents(paymentsProjection, "payment_states"), terminalsProjection, documents(customerCardsProjection, "customer_cards"), paymentDeliveriesProjection, apiKeysProjection];
const BEFORE_RETIRED = ["timeline", "payments", "public_events", "public_event_streams", "webhook_endpoints"];

type Handle = { events: EventStore; readModels: ReadModelStore; close(): Promise<void> };

const docsOf = async (readModels: ReadModelStore, projections: readonly Projection<any>[]) =>
  Promise.all(projections.map((p) => readModels.list(p.name, "")));

function rollingUpgrade(kind: string, open: () => Promise<Handle>) {
  it(`${kind}: both releases' read models end equal to a fresh fold, whatever order their catch-ups run in`, async () => {
    const [writer, before, after] = [await open(), await open(), await open()];
    try {
      const engine = createEngine({ store: writer.events, readModels: writer.readModels });
      await engine.openAccount({ external_account_id: "acct", processor: "A" });
      const runBefore = createProjectionRunner({ store: before.events, readModels: before.readModels, projections: BEFORE, retired: BEFORE_RETIRED });
      const runAfter = createProjectionRunner({ store: after.events, readModels: after.readModels, projections: PROJECTIONS, retired: RETIRED_PROJECTIONS });
      const ids: string[] = [];
      const write = async (round: number) => {
        for (let i = 0; i < 4; i++) {
          const { payment_id } = await engine.createIntent({ external_account_id: "acct", amount: "5.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: `cus_${round}` });
          ids.push(payment_id);
        }
        // earlier payments move on: their documents are updated, not only created
        for (const payment_id of ids.slice(-6, -2)) await engine.authorize({ external_account_id: "acct", payment_id }).catch(() => undefined);
      };
      // the release before runs alone, then the new release starts beside it
      await write(0);
      await runBefore.catchUp();
      const orders: Array<() => Promise<unknown>> = [
        () => runAfter.catchUp(),
        () => runBefore.catchUp(),
        () => Promise.all([runBefore.catchUp(), runAfter.catchUp()]),
        () => runAfter.catchUp().then(() => runBefore.catchUp()),
        () => Promise.all([runAfter.catchUp(), runBefore.catchUp()]),
      ];
      for (const [round, run] of orders.entries()) {
        await write(round + 1);
        await run();
      }
      await Promise.all([runBefore.catchUp(), runAfter.catchUp()]);

      const fresh = createMemoryReadModels();
      const head = await createProjectionRunner({ store: writer.events, readModels: fresh, projections: PROJECTIONS }).catchUp();
      const expected = await docsOf(fresh, PROJECTIONS);
      expect(expected[0]).toHaveLength(ids.length);
      expect(await docsOf(after.readModels, PROJECTIONS)).toEqual(expected);
      expect(await docsOf(before.readModels, BEFORE)).toEqual(expected);
      for (const [handle, projections] of [[after, PROJECTIONS], [before, BEFORE]] as const) {
        for (const p of projections) expect(await handle.readModels.checkpoint(p.name), p.name).toBe(head);
      }
      await engine.close();
    } finally {
      for (const h of [writer, before, after]) await h.close();
    }
  });
}

const database = await testDatabase();

describe("a rolling upgrade: two releases fold one store", () => {
  const dir = mkdtempSync(join(tmpdir(), "cardflow-rolling-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "cardflow.sqlite");
  rollingUpgrade("SQLite", async () => {
    const { events, readModels } = createSqliteStore({ path });
    return { events, readModels, close: async () => (await readModels.close(), await events.close()) };
  });

  const schema = `t_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  rollingUpgrade("PostgreSQL", async () => {
    const { events, readModels } = await createPostgresStore({ connectionString: database, schema });
    return { events, readModels, close: async () => (await readModels.close(), await events.close()) };
  });
});
