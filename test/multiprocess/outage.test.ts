// The database goes away under load: an `npm start` process on its own embedded PostgreSQL, with
// clients creating payments all along. First every connection is terminated
// (pg_terminate_backend), then the server is stopped for a few seconds and started again. The
// process stays up, answers 503 problem+json with Retry-After while the database is away (never
// a 500), keeps /healthz up and /readyz at 503, recovers by itself when the database returns, and
// every acknowledged payment is in the stored events. Prints the outage timeline.
import { afterAll, describe, expect, it } from "vitest";
import { startPostgres, terminateConnections } from "../support/postgres.js";
import { client, freshSchema, merchantKey, startServer, storedEvents, type StoreEnv } from "./servers.js";

const postgres = await startPostgres();
afterAll(() => postgres.stop());

const ACCOUNT = "acct_outage";
const CLIENTS = 6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


describe("the database goes away under load", () => {
  it("terminated connections and a PostgreSQL restart: the process stays up, answers 503 meanwhile, recovers by itself, loses nothing acknowledged", { timeout: 240_000 }, async () => {
    const store: StoreEnv = { DATABASE_URL: postgres.url, DATABASE_SCHEMA: freshSchema() };
    const key = await merchantKey(store, ACCOUNT);
    const server = await startServer(store);
    const http = client(key);
    const intent = { external_account_id: ACCOUNT, amount: "4.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_o" };
    const acknowledged: string[] = [];
    let loading = true;
    const load = Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = 0; loading; i++) {
        const a = await http.post(server.url, "/v2/payment/intent", intent, { "idempotency-key": `c${c}-${i}` });
        if (a.status === 200) acknowledged.push(a.body.payment_id);
        await sleep(a.status === 503 ? 100 : 5);
      }
    });
    const probes: Array<{ at: number; path: string; status: number }> = [];
    const probe = async (path: string) => {
      const status = await fetch(server.url + path, { signal: AbortSignal.timeout(10_000) }).then((r) => r.status, () => 0);
      probes.push({ at: Date.now(), path, status });
      return status;
    };
    const t0 = Date.now();
    try {
      await sleep(1_500);
      const terminatedAt = Date.now();
      const terminated = await terminateConnections(postgres.url);
      await sleep(1_500);

      const downAt = Date.now();
      await postgres.pause();
      await sleep(1_000);
      expect(await probe("/healthz")).toBe(200);
      expect(await probe("/readyz")).toBe(503);
      await sleep(3_000);
      expect(await probe("/healthz")).toBe(200);
      await postgres.resume();
      const backAt = Date.now();
      for (let i = 0; i < 100 && (await probe("/readyz")) !== 200; i++) await sleep(100);
      await sleep(2_000);
      loading = false;
      await Promise.all(load);

      const answers = http.answers;
      const after = (t: number) => answers.filter((a) => a.at >= t);
      const first503 = after(downAt).find((a) => a.status === 503);
      const firstOkAfter = after(backAt).find((a) => a.status === 200);
      const statuses = [...new Set(answers.map((a) => a.status))].sort();
      const events = await storedEvents(store);
      const created = new Set(events.filter((e) => e.type === "PaymentIntentCreated").map((e) => (e.data as { payment_id: string }).payment_id));
      const lost = acknowledged.filter((id) => !created.has(id));
      const requestIds = answers.map((a) => a.requestId);
      console.log(
        `[figures] PostgreSQL outage under load (${CLIENTS} clients, ${answers.length} requests in ${Date.now() - t0} ms): ` +
          `${terminated} connections terminated at +${terminatedAt - t0} ms, 503 after termination ${after(terminatedAt).filter((a) => a.at < downAt && a.status === 503).length}; ` +
          `database stopped at +${downAt - t0} ms, first 503 +${first503 ? first503.at - downAt : "none"} ms after; ` +
          `started again at +${backAt - t0} ms, first 2xx +${firstOkAfter ? firstOkAfter.at - backAt : "none"} ms after; ` +
          `statuses ${JSON.stringify(Object.fromEntries(statuses.map((s) => [s, answers.filter((a) => a.status === s).length])))}; ` +
          `acknowledged ${acknowledged.length}, lost ${lost.length}; duplicate request ids ${requestIds.length - new Set(requestIds).size}`,
      );
      expect(server.child.exitCode).toBeNull();
      expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
      expect(first503).toBeDefined();
      expect(firstOkAfter).toBeDefined();
      for (const a of answers.filter((a) => a.status === 503)) {
        expect(a.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect([a.body.code, a.headers.get("retry-after")]).toEqual(["store_unavailable", "1"]);
      }
      expect(lost).toEqual([]);
      expect(new Set(requestIds).size).toBe(requestIds.length);
    } finally {
      loading = false;
      const code = await server.stop();
      if (code !== 0) console.error(server.output());
      expect(code).toBe(0);
    }
  });
});
