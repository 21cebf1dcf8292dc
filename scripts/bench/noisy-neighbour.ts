// Row 15 — webhook tenant isolation (issue 25): one account whose 16 webhook endpoints all time out
// for 60 s (a receiver that accepts connections and never answers; WEBHOOK_TIMEOUT_MS 10 s, as
// served), with a backlog of its payments' events to deliver, must leave another account's
// status-read p99 within 1.2× of its baseline. The noisy account sends no request meanwhile: what
// is measured is what its failing deliveries cost the other tenant. One `npm start` process (the sandbox, SQLite), the quiet account reading
// one of its payments with 4 concurrent clients, first alone (baseline), then beside the noisy one.
//   node --import tsx scripts/bench/noisy-neighbour.ts [--quick]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createApiKeys } from "../../src/api-keys.js";
import { configFromEnv, openStores } from "../../src/config.js";
import { createEngine } from "../../src/engine.js";
import { emit, percentile, quick } from "./lib.js";

const PHASE_MS = quick ? 2_000 : 60_000;
const READERS = 4;
const ENDPOINTS = 16;

const dir = mkdtempSync(join(tmpdir(), "cardflow-noisy-"));
// the black hole: takes every connection and request, answers none (each delivery times out)
const hole: Server = createServer(() => undefined);
await new Promise<void>((resolve) => hole.listen(0, "127.0.0.1", resolve));
const holeUrl = `http://127.0.0.1:${(hole.address() as AddressInfo).port}`;

// the accounts and their keys, in this process, on the server's store
const { store, readModels } = await openStores(configFromEnv({ DATA_DIR: dir, DATABASE_URL: "" }));
const setup = createEngine({ store, readModels });
for (const account of ["acct_quiet", "acct_noisy"]) await setup.openAccount({ external_account_id: account });
const keys = { quiet: (await createApiKeys(setup).issue("acct_quiet")).key, noisy: (await createApiKeys(setup).issue("acct_noisy")).key };
await setup.close();

const probe = await new Promise<number>((resolve) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const { port } = s.address() as AddressInfo;
    s.close(() => resolve(port));
  });
});
const server = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
  env: { ...process.env, NODE_ENV: "", SANDBOX: "on", DATA_DIR: dir, PORT: String(probe), HOST: "127.0.0.1", LOG_LEVEL: "warn", WEBHOOK_ALLOW_PRIVATE: "1", WEBHOOK_TIMEOUT_MS: "10000", METRICS_PORT: "0" },
  stdio: ["ignore", "ignore", "inherit"],
});
const base = `http://127.0.0.1:${probe}`;
for (let waited = 0; !(await fetch(`${base}/healthz`).then((r) => r.ok, () => false)); waited += 100) {
  if (waited > 60_000) throw new Error("the server did not start");
  await new Promise((r) => setTimeout(r, 100));
}

const post = (key: string, path: string, body: object) =>
  fetch(base + path, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<any>);
const charge = (key: string, account: string) =>
  post(key, "/v2/payment/intent", { external_account_id: account, amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });

const quietPayment = (await charge(keys.quiet, "acct_quiet")).payment_id as string;
const statusUrl = `${base}/v2/payment/intent/${quietPayment}?external_account_id=acct_quiet`;

/** The quiet account's status reads for `ms`: each read's latency. */
async function reads(ms: number): Promise<number[]> {
  const latencies: number[] = [];
  const until = performance.now() + ms;
  await Promise.all(
    Array.from({ length: READERS }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        const res = await fetch(statusUrl, { headers: { authorization: `Bearer ${keys.quiet}` } });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`status read answered ${res.status}`);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
}

try {
  await reads(Math.min(PHASE_MS, 2_000)); // warm-up
  const baseline = await reads(PHASE_MS);
  // the noisy account: 16 endpoints into the black hole, and payments to deliver while the quiet one reads
  for (let i = 0; i < ENDPOINTS; i++) await post(keys.noisy, "/v2/webhook_endpoints", { external_account_id: "acct_noisy", url: `${holeUrl}/e${i}` });
  // a backlog: its payments' events, each to be posted to all 16 endpoints (and retried)
  const noisyPayments = quick ? 20 : 200;
  for (let i = 0; i < noisyPayments; i++) await charge(keys.noisy, "acct_noisy");
  const beside = await reads(PHASE_MS);
  const [p99Base, p99Noisy] = [percentile(baseline, 99), percentile(beside, 99)];
  const ratio = p99Noisy / p99Base;
  const ms = (x: number) => `${x.toFixed(2)} ms`;
  emit([
    {
      row: "15",
      figure: `another account's status-read p99 while one account's ${ENDPOINTS} webhook endpoints all time out for ${PHASE_MS / 1000} s (SQLite, ${READERS} readers, one npm start process)`,
      value: `p99 ${ms(p99Noisy)} (p50 ${ms(percentile(beside, 50))})`,
      ceiling: `baseline alone p99 ${ms(p99Base)} (p50 ${ms(percentile(baseline, 50))})`,
      ratio: `${ratio.toFixed(2)}×`,
      target: "≤ 1.2×",
      met: ratio <= 1.2,
      command: "node --import tsx scripts/bench/noisy-neighbour.ts",
      notes: [`${noisyPayments} noisy payments created just before (their events to every endpoint), no noisy request during the measure; WEBHOOK_TIMEOUT_MS 10000; ${baseline.length} and ${beside.length} reads`],
    },
  ]);
} finally {
  server.kill("SIGTERM");
  await new Promise((r) => server.once("exit", r));
  hole.closeAllConnections();
  hole.close();
  rmSync(dir, { recursive: true, force: true });
}
