// Background loops wait a PostgreSQL outage out instead of ending the process. Once a server
// process started into an outage died of an unhandled StoreUnavailable: the webhook feed's first
// catch-up (delivery's start, after the API listened) failed and nothing caught it.
// - In this process: the feed, the read models' runner and webhook delivery are started while the
//   database is stopped; none of them fails, and once it is back they catch up by themselves.
// - A real `npm start` process with a webhook endpoint: the database is stopped and started under
//   it; the process stays up, then serves again: a payment made after the outage is listed and
//   its webhook delivered.
import { afterAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { configFromEnv, openStores } from "../../src/config.js";
import { createEngine } from "../../src/engine.js";
import { randomIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createWebhooks } from "../../src/webhooks/index.js";
import { startPostgres } from "../support/postgres.js";
import { startReceiver, until } from "../webhooks/receiver.js";
import { client, freshSchema, merchantKey, startServer, type StoreEnv } from "./servers.js";
import type { CreateIntentRequest } from "../../src/inputs.js";

const postgres = await startPostgres();
afterAll(() => postgres.stop());
/** The database stopped and started again (resume only after a pause: it waits for a start). */
let paused = false;
const stopDatabase = () => ((paused = true), postgres.pause());
const startDatabase = async () => {
  if (paused) await postgres.resume();
  paused = false;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const intent = (account: string): CreateIntentRequest => ({ external_account_id: account, amount: "4.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_b" });

/** How a promise has settled so far. */
function watch(promise: Promise<unknown>) {
  const state = { settled: "pending" as "pending" | "resolved" | "rejected", error: undefined as unknown };
  promise.then(
    () => (state.settled = "resolved"),
    (error: unknown) => Object.assign(state, { settled: "rejected", error }),
  );
  return state;
}

describe("background loops during a PostgreSQL outage", () => {
  it("the feed, the read models and webhook delivery started while the database is stopped wait, then catch up", { timeout: 120_000 }, async () => {
    const store: StoreEnv = { DATABASE_URL: postgres.url, DATABASE_SCHEMA: freshSchema() };
    const stores = await openStores(configFromEnv({ DATA_DIR: "", ...store }));
    const engine = createEngine({ ...stores, processors: createSimulators({ clock: systemClock, ids: randomIds() }) });
    const errors: unknown[] = [];
    const webhooks = createWebhooks({ engine, onError: (error) => errors.push(error) });
    try {
      await engine.openAccount({ external_account_id: "acct_bg", processor: "A" });
      const { payment_id } = await engine.createIntent(intent("acct_bg"));
      await stopDatabase();
      const delivery = watch(webhooks.delivery.start());
      engine.projections.start();
      await sleep(2_000);
      // before the fix: rejected with StoreUnavailable (in a server: an unhandled rejection)
      expect(delivery.settled, String(delivery.error)).toBe("pending");
      expect(errors.length).toBeGreaterThan(0); // each failed try is told (logged by a server)
      await startDatabase();
      await until(() => delivery.settled !== "pending", 30_000, "delivery's start after the outage");
      expect(delivery.settled, String(delivery.error)).toBe("resolved");
      const indexed = await webhooks.feed.entries({ account: "acct_bg", payment_id }, 0, 10);
      expect(indexed.map((e) => e.event.payment_id)).toContain(payment_id);
      await engine.projections.caughtUp({ timeoutMs: 30_000 });
    } finally {
      await startDatabase();
      await webhooks.delivery.stop();
      await engine.close();
    }
  });

  it("a server process stays up while the database is stopped and started, then serves again: lists, webhooks", { timeout: 180_000 }, async () => {
    const store: StoreEnv = { DATABASE_URL: postgres.url, DATABASE_SCHEMA: freshSchema() };
    const key = await merchantKey(store, "acct_bgp");
    const hooks = await startReceiver();
    const server = await startServer(store);
    const http = client(key);
    try {
      expect((await http.post(server.url, "/v2/webhook_endpoints", { external_account_id: "acct_bgp", url: hooks.url() })).status).toBe(200);
      const before = await http.post(server.url, "/v2/payment/intent", intent("acct_bgp"), { "idempotency-key": "before" });
      expect(before.status).toBe(200);
      await until(() => hooks.acknowledged().some((r) => r.event.payment_id === before.body.payment_id), 30_000, "the webhook before the outage");

      await stopDatabase();
      const during = await http.post(server.url, "/v2/payment/intent", intent("acct_bgp"), { "idempotency-key": "during" });
      expect(during.status).toBe(503);
      await sleep(6_000); // several retries of every background loop (their pause grows to 5 s)
      expect(server.child.exitCode).toBeNull();
      await startDatabase();

      let after = during;
      await until(async () => (after = await http.post(server.url, "/v2/payment/intent", intent("acct_bgp"), { "idempotency-key": "during" })).status === 200, 30_000, "a 2xx after the outage");
      await until(() => hooks.acknowledged().some((r) => r.event.payment_id === after.body.payment_id), 30_000, "the webhook of the payment made after the outage");
      const listed = await fetch(`${server.url}/v2/payments?external_account_id=acct_bgp`, { headers: { authorization: `Bearer ${key}` } });
      expect(listed.status).toBe(200);
      const ids = ((await listed.json()) as { data: Array<{ payment_id: string }> }).data.map((p) => p.payment_id);
      expect(ids).toEqual(expect.arrayContaining([before.body.payment_id, after.body.payment_id]));
      expect(server.child.exitCode).toBeNull();
    } finally {
      await startDatabase();
      const code = await server.stop();
      await hooks.close();
      if (code !== 0) console.error(server.output());
      expect(code).toBe(0);
    }
  });
});
