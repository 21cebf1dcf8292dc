// PG_POOL_SIZE bounds a server process's PostgreSQL connections, under a burst of concurrent
// requests (a real server process; its connections counted in pg_stat_activity by their
// application name, which names the schema).
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { applicationName } from "../../src/store/postgres/pool.js";
import { client, freshStores, merchantKey, startServer, type ServerProcess } from "./servers.js";

const stores = await freshStores("pool-size");
const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

describe("PG_POOL_SIZE", () => {
  it("is the most connections a server opens, however many requests come at once", { timeout: 60_000 }, async () => {
    const store = stores.postgres();
    if (!("DATABASE_URL" in store)) throw new Error("a PostgreSQL store");
    const key = await merchantKey(store, "acct_pool");
    const server = await startServer(store, { PG_POOL_SIZE: "2" });
    servers.push(server);
    const http = client(key);
    const admin = new pg.Client({ connectionString: store.DATABASE_URL });
    await admin.connect();
    try {
      const connections = async () => Number((await admin.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1", [applicationName(store.DATABASE_SCHEMA)])).rows[0]!.n);
      let most = 0;
      let bursting = true;
      const watching = (async () => {
        while (bursting) {
          most = Math.max(most, await connections());
          await new Promise((r) => setTimeout(r, 2));
        }
      })();
      const list = () => fetch(`${server.url}/v2/payments?external_account_id=acct_pool`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);
      const create = { external_account_id: "acct_pool", amount: "1.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_pool" };
      for (let round = 0; round < 5; round++) {
        const answers = await Promise.all(
          Array.from({ length: 32 }, (_, i) => (i % 2 ? http.post(server.url, "/v2/payment/intent", create).then((a) => a.status) : list())),
        );
        expect(answers).toEqual(answers.map(() => 200));
      }
      bursting = false;
      await watching;
      expect(most).toBe(2);
    } finally {
      await admin.end();
    }
  });
});
