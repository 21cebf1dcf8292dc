// What a command sends to PostgreSQL, counted at the driver (each statement is a round trip: pg
// sends one query at a time per connection): one statement per commit, nothing read back that the
// engine already holds, no BEGIN/COMMIT around what one statement does atomically. A round trip
// that comes back (a re-read, a separate idempotency write, a transaction around one statement)
// fails these tests.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listPayments } from "../../projections/payment-list.js";
import { openBenchAccount, storedCardFlow } from "../../scripts/bench/flows.js";
import { systemClock } from "../../src/clock.js";
import { createEngine, type Engine } from "../../src/engine.js";
import { createIdempotency } from "../../src/idempotency.js";
import { createPostgresStore, type PostgresStore } from "../../src/store/postgres/index.js";
import { testDatabase } from "../support/postgres.js";

const database = await testDatabase();

/** Statements sent by every pg client of this process while `work` runs, by kind (the function called, or the first three words). */
async function sent(work: () => Promise<unknown>): Promise<string[]> {
  const kinds: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    const text = typeof config === "string" ? config : (config as { text?: string }).text ?? "";
    const t = text.replace(/\s+/g, " ").trim();
    // the append signal's own connection says "listening" every 2 s (src/store/postgres/signal.ts): not a command's
    if (!/pg_notify|^LISTEN/i.test(t)) kinds.push(/^SELECT \* FROM (\w+)\(/i.exec(t)?.[1] ?? t.split(" ").slice(0, 3).join(" "));
    return (query as (...a: unknown[]) => unknown).call(this, config, ...rest);
  } as typeof query;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = query;
  }
  return kinds;
}

describe("PostgreSQL round trips per command", () => {
  let store: PostgresStore;
  let engine: Engine;
  let card: string;
  beforeAll(async () => {
    store = await createPostgresStore({ connectionString: database, schema: `t_${randomUUID().replaceAll("-", "").slice(0, 12)}` });
    engine = createEngine({ store: store.events, readModels: store.readModels });
    card = await openBenchAccount(engine);
    await storedCardFlow(engine, card); // connections opened, statements prepared
  });
  afterAll(() => engine.close());

  it("a stored-card flow: one statement per commit, five commits (created, then each attempt before its processor call and its outcome)", async () => {
    let paymentId = "";
    const create = await sent(async () => {
      paymentId = (await engine.createIntent({ external_account_id: "acct_bench", amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: card, external_customer_id: "cus_bench" })).payment_id;
    });
    const ref = { external_account_id: "acct_bench", payment_id: paymentId };
    const authorize = await sent(async () => expect((await engine.authorize(ref)).status).toBe("requires_capture"));
    const capture = await sent(async () => expect((await engine.capture({ ...ref, amount: "10.00" })).status).toBe("succeeded"));
    expect({ create, authorize, capture }).toEqual({ create: ["append_one"], authorize: ["append_one", "append_one"], capture: ["append_one", "append_one"] });
    // each was durable when its command answered
    expect((await store.events.readStream(`payment-${paymentId}`)).length).toBe(5);
  });

  it("with an Idempotency-Key: the claim, the appends (the answer recorded in the outcome's statement), the record closed; a failure releases the key in one statement", async () => {
    const idempotency = createIdempotency({ store: store.events, clock: systemClock, recountMs: Number.MAX_SAFE_INTEGER });
    const created = await engine.createIntent({ external_account_id: "acct_bench", amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: card, external_customer_id: "cus_bench" });
    const ref = { external_account_id: "acct_bench", payment_id: created.payment_id };
    await idempotency.run({ scope: "acct_bench", key: randomUUID(), fingerprint: "warm" }, async () => ({})); // the scope counted once
    const authorize = await sent(() => idempotency.run({ scope: "acct_bench", key: randomUUID(), fingerprint: "a" }, (ctx) => engine.authorize(ref, ctx)));
    // no read of the payment's stream: a key that made no processor call on the payment (its
    // Loaded.attemptKeys) is a first try; only a retry of one is looked up (pipeline.answeredBefore)
    expect(authorize).toEqual(["INSERT INTO idempotency", "append_one", "append_one", "UPDATE idempotency SET"]);
    const failed = await sent(() =>
      idempotency.run({ scope: "acct_bench", key: randomUUID(), fingerprint: "f" }, () => Promise.reject(new Error("refused"))).catch((e: Error) => e.message),
    );
    expect(failed).toEqual(["INSERT INTO idempotency", "WITH released AS"]);
  });

  it("a read-model batch: BEGIN with its settings, the committers' locks and the checkpoints they guard in one statement, every write in one statement, COMMIT", async () => {
    const shape = { version: 1, table: { columns: { account: "text" }, indexes: [["account", "key"]], row: (d: { account: string }) => ({ account: d.account }) } } as const;
    await store.readModels.prepare("rt_table", shape);
    const batch = (checkpoint: number, expectedCheckpoint: number) => [
      { projection: "rt_table", docs: [{ key: `k${checkpoint}`, doc: { account: "a" } }, { key: "shared", doc: { account: `b${checkpoint}` } }], checkpoint, expectedCheckpoint },
      { projection: "rt_docs", docs: [{ key: "d", doc: { n: checkpoint } }], checkpoint, expectedCheckpoint },
    ];
    await store.readModels.commitBatch(batch(1, 0));
    const commit = await sent(() => store.readModels.commitBatch(batch(2, 1)));
    expect(commit).toEqual(["BEGIN; SET LOCAL", "SELECT checked_projection AS", "WITH cf_w0 AS", "COMMIT"]);
    // every write landed, and a stale batch still writes nothing
    expect(await store.readModels.query("rt_table", { where: { account: "a" }, order: ["key"], direction: "asc", limit: 10 })).toEqual([{ account: "a" }, { account: "a" }]);
    expect(await store.readModels.get("rt_table", "shared")).toEqual({ account: "b2" });
    expect(await store.readModels.get("rt_docs", "d")).toEqual({ n: 2 });
    await expect(store.readModels.commitBatch(batch(3, 1))).rejects.toThrow(/checkpoint/i);
    expect([await store.readModels.checkpoint("rt_table"), await store.readModels.checkpoint("rt_docs"), await store.readModels.get("rt_docs", "d")]).toEqual([2, 2, { n: 2 }]);
  });

  it("a payment list that reflects every write acknowledged before it: one statement when the read models are at the head, the wait for them when not", async () => {
    const list = () => listPayments(engine.projections.fresh, { external_account_id: "acct_bench" }, { limit: 5 });
    await engine.projections.caughtUp();
    const [before] = (await list()).docs as Array<{ state: { context: { intent: { payment_id: string } } } }>;
    expect(await sent(list)).toEqual(["SELECT key, doc::text"]);
    // a payment the read models have not applied yet (this engine does not project live): the list waits for it
    const created = await engine.createIntent({ external_account_id: "acct_bench", amount: "1.00", payment_method_types: "card", capture_method: "manual", payment_method_id: card, external_customer_id: "cus_bench" });
    let page: Awaited<ReturnType<typeof list>> | undefined;
    const behind = await sent(async () => (page = await list()));
    expect(behind.slice(0, 2)).toEqual(["SELECT key, doc::text", "SELECT coalesce(max(position), 0)"]);
    expect(page!.docs.map((d) => (d as typeof before)!.state.context.intent.payment_id)).toContain(created.payment_id);
    expect(page!.docs[1]).toEqual(before);
  });
});
