// A sandbox server already running when a production server comes to its store (SQLite: one
// DATA_DIR; PostgreSQL: one schema). The sandbox's reconciler would ask its simulators' ledger about
// production's real call, hear "never received" and abandon the attempt (a retry would charge the
// card again). So the sandbox process stops once production counted itself there: exit 1, one line
// `cardflow: …` saying why; production waits, counted, before it serves (its log says so), and no
// AttemptAbandoned is ever appended to production's payment whose answer was lost. Under
// `serve --workers 2`, each worker stops so, and the primary starts no other in its place.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/postgres.js";
import { SERVER_NODE_ARGS } from "../support/server-args.js";
import { PROCESSOR_API_KEY, startHttpsProcessor, TEST_CA_FILE } from "../support/https-processor.js";
import { client, freshStores, merchantKey, startServer, storedEvents, type ServerProcess } from "./servers.js";

const BIN = fileURLToPath(new URL("../../bin/cardflow.js", import.meta.url));
const EXAMPLE_ADAPTERS = fileURLToPath(new URL("../../src/processors/http-processors.ts", import.meta.url));
const stores = await freshStores("sandbox-production");
let processor: Awaited<ReturnType<typeof startHttpsProcessor>>;
beforeAll(async () => void (processor = await startHttpsProcessor()));
afterAll(() => processor?.close());

/** A production server on the example adapter, the HTTPS test processor behind it; its reconciler far from deciding anything. */
const productionEnv = () => ({
  NODE_ENV: "production",
  SANDBOX: "",
  WEBHOOK_ALLOW_PRIVATE: "",
  LOG_LEVEL: "info",
  PROCESSORS_MODULE: EXAMPLE_ADAPTERS,
  PROCESSOR_A_URL: processor.url,
  PROCESSOR_A_API_KEY: PROCESSOR_API_KEY,
  PROCESSOR_B_URL: processor.url,
  PROCESSOR_B_API_KEY: PROCESSOR_API_KEY,
  OUTBOUND_ALLOWLIST: "127.0.0.1",
  OUTBOUND_CA_FILE: TEST_CA_FILE,
  RECONCILE_GRACE_MS: "600000",
});

describe.each(["sqlite", "postgres"] as const)("a sandbox server running when a production server starts on its %s store", (kind) => {
  it("the sandbox exits 1 saying why, and makes no decision on production's attempt", { timeout: 90_000 }, async () => {
    const store = stores[kind]();
    const key = await merchantKey(store, "acct_a", "A");
    // its reconciler would abandon an attempt 3 s old that its simulators never received
    const sandbox = await startServer(store, { NODE_ENV: "", SANDBOX: "on", RECONCILE_GRACE_MS: "3000", RECONCILE_INTERVAL_MS: "1000" });
    let production: ServerProcess | undefined;
    try {
      production = await startServer(store, productionEnv());
      // a charge the processor made, its answer lost: its outcome is unknown (503), the attempt open
      const http = client(key);
      const intent = await http.post(production.url, "/v2/payment/intent", { external_account_id: "acct_a", amount: "40.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_ok", external_customer_id: "cus_1" });
      expect(intent.status, JSON.stringify(intent.body)).toBe(200);
      const payment_id = intent.body.payment_id as string;
      processor.failAfterActing.add(payment_id);
      const auth = await http.post(production.url, "/v2/payment/auth", { external_account_id: "acct_a", payment_id });
      expect(auth.status, JSON.stringify(auth.body)).toBe(503);
      // past the sandbox's grace and a pass after it
      await new Promise((r) => setTimeout(r, 5_000));

      const exited = await Promise.race([sandbox.exited, new Promise((r) => setTimeout(() => r("still running"), 100))]);
      expect(exited, sandbox.output()).toBe(1);
      expect(sandbox.output()).toMatch(/^cardflow: a production process started on this store \(1 production process served it\): the sandbox's simulated processors never act on production payments, so this sandbox process stops/m);
      expect(production.output()).toContain("a sandbox process ran on this store: waiting 2000 ms");
      const events = (await storedEvents(store)).filter((e) => e.stream === `payment-${payment_id}`).map((e) => e.type);
      expect(events).toContain("AuthorizationAttempted");
      expect(events).not.toContain("AttemptAbandoned");
    } finally {
      processor.failAfterActing.clear();
      await sandbox.stop();
      if (production) expect(await production.stop()).toBe(0);
    }
  });
});

describe("a sandbox `serve --workers 2` running when a production server starts on its SQLite store", () => {
  it("every worker stops; the primary starts no other and exits 1", { timeout: 90_000 }, async () => {
    const store = stores.sqlite() as { DATA_DIR: string };
    const port = await freePort();
    const child = spawn(process.execPath, [...SERVER_NODE_ARGS, BIN, "serve", "--workers", "2", "--port", String(port), "--host", "127.0.0.1", "--data-dir", store.DATA_DIR], {
      env: { ...process.env, NODE_ENV: "", SANDBOX: "on", DATABASE_URL: "", METRICS_PORT: "0", LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    let production: ServerProcess | undefined;
    try {
      for (let waited = 0; !output.includes("with 2 worker processes"); waited += 100) {
        if (child.exitCode !== null || waited > 60_000) throw new Error(`serve --workers 2 did not come up:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      production = await startServer(store, productionEnv());
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r("still running"), 10_000))]);
      expect(code, output).toBe(1);
      expect(output.match(/^cardflow: a production process started on this store/gm), output).toHaveLength(2);
      expect(output).not.toContain("starting another");
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      if (production) expect(await production.stop()).toBe(0);
    }
  });
});
