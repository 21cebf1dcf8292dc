// Row 15 — webhook tenant isolation (issue 25): one account whose 16 webhook endpoints all time out
// for 60 s (a receiver that accepts connections and never answers; WEBHOOK_TIMEOUT_MS 10 s, as
// served), with a backlog of its payments' events to deliver, must leave another account's
// status-read p99 within 1.2× of its baseline. The noisy account sends no request meanwhile: what
// is measured is what its failing deliveries cost the other tenant. Each round is one fresh `npm
// start` process (the sandbox, SQLite), the quiet account reading one of its payments with 4
// concurrent clients, alone (baseline) and beside the noisy one; the order alternates between rounds
// (a one-minute p99 is one sample: which phase ran first, and on how warm a server, must not
// decide the figure), and the ratio is the median of the rounds' ratios, as row 12's.
//   node --import tsx scripts/bench/noisy-neighbour.ts [--quick] [--rounds=N]
// CPU_PROF=<dir>: each round's server writes a --cpu-prof profile there when it stops (./served.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { call, closeClient } from "./client.js";
import { emit, median, percentile, quick } from "./lib.js";
import { accountKeys, serve, type Served } from "./served.js";

const PHASE_MS = quick ? 2_000 : 60_000;
const ROUNDS = Number(process.argv.find((a) => a.startsWith("--rounds="))?.slice(9) ?? (quick ? 1 : 3));
const READERS = 4;
const ENDPOINTS = 16;
const NOISY_PAYMENTS = quick ? 20 : 200;
const TIMEOUT_MS = 10_000;

// the black hole: takes every connection and request, answers none (each delivery times out)
const hole: Server = createServer(() => undefined);
await new Promise<void>((resolve) => hole.listen(0, "127.0.0.1", resolve));
const holeUrl = `http://127.0.0.1:${(hole.address() as AddressInfo).port}`;

interface Round {
  baseline: number[];
  beside: number[];
}

/** One round on a fresh server and data directory: the quiet account's reads alone and beside the noisy one, in the order given. */
async function round(noisyFirst: boolean): Promise<Round> {
  const dir = mkdtempSync(join(tmpdir(), "cardflow-noisy-"));
  let server: Served | undefined;
  try {
    const keys = await accountKeys({ DATA_DIR: dir }, ["acct_quiet", "acct_noisy"]);
    const [quietKey, noisyKey] = [keys.get("acct_quiet")!, keys.get("acct_noisy")!];
    server = await serve({ DATA_DIR: dir }, { NODE_ENV: "", SANDBOX: "on", LOG_LEVEL: "warn", WEBHOOK_ALLOW_PRIVATE: "1", WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
    const base = server.url;
    const ok = async (key: string, method: string, path: string, body?: object) => {
      const answer = await call(base, key, method, path, body);
      if (answer.status < 200 || answer.status > 299) throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      return answer.body;
    };
    const charge = (key: string, account: string) =>
      ok(key, "POST", "/v2/payment/intent", { external_account_id: account, amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });

    const quietPayment = (await charge(quietKey, "acct_quiet")).payment_id as string;
    const statusPath = `/v2/payment/intent/${quietPayment}?external_account_id=acct_quiet`;
    /** The quiet account's status reads for `ms`: each read's latency. */
    const reads = async (ms: number): Promise<number[]> => {
      const latencies: number[] = [];
      const until = performance.now() + ms;
      await Promise.all(
        Array.from({ length: READERS }, async () => {
          while (performance.now() < until) {
            const started = performance.now();
            const res = await call(base, quietKey, "GET", statusPath);
            if (res.status !== 200) throw new Error(`status read answered ${res.status}`);
            latencies.push(performance.now() - started);
          }
        }),
      );
      return latencies;
    };
    // the noisy account: 16 endpoints into the black hole, and a backlog of its payments' events, each to be posted to all 16 (and retried)
    const noisy = async (): Promise<string[]> => {
      const endpoints: string[] = [];
      for (let i = 0; i < ENDPOINTS; i++) endpoints.push((await ok(noisyKey, "POST", "/v2/webhook_endpoints", { external_account_id: "acct_noisy", url: `${holeUrl}/e${i}` })).id);
      for (let i = 0; i < NOISY_PAYMENTS; i++) await charge(noisyKey, "acct_noisy");
      return endpoints;
    };

    await reads(Math.min(PHASE_MS, 2_000)); // warm-up
    if (!noisyFirst) {
      const baseline = await reads(PHASE_MS);
      await noisy();
      return { baseline, beside: await reads(PHASE_MS) };
    }
    const endpoints = await noisy();
    const beside = await reads(PHASE_MS);
    // quiet again: the endpoints deleted, and the posts still hanging in the hole timed out
    for (const id of endpoints) await ok(noisyKey, "DELETE", `/v2/webhook_endpoints/${id}?external_account_id=acct_noisy`);
    await new Promise((r) => setTimeout(r, TIMEOUT_MS + 2_000));
    return { baseline: await reads(PHASE_MS), beside };
  } finally {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  const rounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round(i % 2 === 1));
  closeClient();
  const p99s = rounds.map((r) => ({ base: percentile(r.baseline, 99), beside: percentile(r.beside, 99) }));
  const ratios = p99s.map((p) => p.beside / p.base);
  const ratio = median(ratios);
  const ms = (x: number) => x.toFixed(2);
  const each = (f: (r: Round, i: number) => string) => rounds.map(f).join(" / ");
  emit([
    {
      row: "15",
      figure: `another account's status-read p99 while one account's ${ENDPOINTS} webhook endpoints all time out for ${PHASE_MS / 1000} s (SQLite, ${READERS} readers, one npm start process; ${ROUNDS} rounds, the order alternating)`,
      value: `p99 ${each((_, i) => ms(p99s[i]!.beside))} ms (p50 ${each((r) => ms(percentile(r.beside, 50)))} ms)`,
      ceiling: `baseline alone p99 ${each((_, i) => ms(p99s[i]!.base))} ms (p50 ${each((r) => ms(percentile(r.baseline, 50)))} ms)`,
      ratio: `${ratio.toFixed(2)}× (median of ${ratios.map((r) => r.toFixed(2)).join(" / ")})`,
      target: "≤ 1.2×",
      met: ratio <= 1.2,
      command: "node --import tsx scripts/bench/noisy-neighbour.ts",
      notes: [
        `rounds 1, 3, … measure the baseline first, then create the noisy account's endpoints and backlog; rounds 2, 4, … the noisy phase first, then delete its endpoints and wait ${(TIMEOUT_MS + 2_000) / 1000} s (the posts still hanging time out) before the baseline; each round a fresh server and data directory after 2 s of warm-up reads`,
        `${NOISY_PAYMENTS} noisy payments created just before the noisy phase (their events to every endpoint), no noisy request during the measure; WEBHOOK_TIMEOUT_MS ${TIMEOUT_MS}; reads per round, baseline and beside: ${each((r) => `${r.baseline.length} and ${r.beside.length}`)}`,
      ],
    },
  ]);
} finally {
  hole.closeAllConnections();
  hole.close();
}
