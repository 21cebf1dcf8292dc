// The HTTP API on PostgreSQL (embedded server, fsync on; the API server in its own process, as
// shipped: src/main.ts, see scripts/bench/http-server.ts):
// Row 9 — read-your-writes under 64 clients: each client authorizes a fresh payment and reads its
//   status right after (GET /v2/payment/intent/{id}); p99 of that read, checked to show the
//   command's result, next to the p99 of the same read of a payment nobody writes under the same
//   load (each client still runs its create + authorize before each read), 64 clients, same
//   server, rounds alternating.
// Row 10 — HTTP stored-card flows/s (create + authorize + capture) on PostgreSQL, 64 clients.
//   npx tsx scripts/bench/http-postgres.ts [--quick] [--row=9|--row=10]  (default: both rows)
import { loadavg } from "node:os";
import { startPostgres } from "../../test/support/postgres.js";
import { cpuMeter, fmtShares, postgresPids } from "./cpu.js";
import { call, closeClient } from "./client.js";
import { createBody, httpFlows, SECONDS, start, stopped, type Ready } from "./http-lib.js";
import { emit, fmtRate, median, percentile, quick } from "./lib.js";

const ROUNDS = quick ? 1 : 3;
const only = process.argv.find((a) => a.startsWith("--row="))?.slice(6);
const CLIENTS = 64;
const server = process.env.DATABASE_URL ? undefined : await startPostgres();
const url = process.env.DATABASE_URL ?? server!.url;

/**
 * Latencies (ms) of status reads by CLIENTS clients for SECONDS. "own": each read follows the
 * client's own create + authorize and reads that payment (checked to show the command's result);
 * "other": the same, but reads a payment nobody writes (the same load, no read of one's own
 * write); "alone": reads of that payment only, no commands (the read's floor on this machine).
 */
async function statusReads(ready: Ready, mode: "own" | "other" | "alone"): Promise<number[]> {
  const own = mode === "own";
  const base = `http://127.0.0.1:${ready.port}`;
  const post = async (path: string, body: object | string) => {
    const res = await call(base, ready.key, "POST", path, body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { payment_id: string; status: string };
  };
  const latencies: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < end) {
        let payment = ready.payment!;
        let expected: string | undefined;
        if (mode !== "alone") {
          const created = (await post("/v2/payment/intent", createBody(ready))).payment_id;
          expected = (await post("/v2/payment/auth", { external_account_id: ready.account, payment_id: created })).status;
          if (own) payment = created;
        }
        const t = performance.now();
        const res = await call(base, ready.key, "GET", `/v2/payment/intent/${payment}?external_account_id=${ready.account}`);
        const read = res.body as { status: string };
        latencies.push(performance.now() - t);
        if (res.status !== 200) throw new Error(`status read: ${res.status}`);
        if (own && read.status !== expected) throw new Error(`read-your-writes: the command answered ${expected}, the read right after ${read.status}`);
      }
    }),
  );
  return latencies;
}

const real = await start("real", { DATABASE_URL: url });
const load = () => `load average ${loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end`;
try {
  const rows: Parameters<typeof emit>[0] = [];
  if (only !== "10") rows.push(await readYourWrites());
  if (only !== "9") rows.push(await fullFlows());
  emit(rows);
} finally {
  closeClient();
  await stopped(real.child);
  await server?.stop();
}

/** Row 9: rounds alternating reads of one's own payment right after a command and reads of another payment under the same load. */
async function readYourWrites() {
  await statusReads(real.ready, "own"); // warm-up
  const after: number[] = [];
  const plain: number[] = [];
  const alone: number[] = [];
  const reads: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const own = await statusReads(real.ready, "own");
    after.push(percentile(own, 99));
    reads.push(own.length / SECONDS);
    plain.push(percentile(await statusReads(real.ready, "other"), 99));
    alone.push(percentile(await statusReads(real.ready, "alone"), 99));
  }
  return {
    row: "9",
    figure: `PostgreSQL read-your-writes over HTTP, ${CLIENTS} clients: p99 of a status read (GET /v2/payment/intent/{id}) right after the client's own create + authorize`,
    value: `p99 ${median(after).toFixed(1)} ms`,
    ceiling: `p99 of the same read of a payment nobody writes, under the same load (each read after the client's own create + authorize), ${CLIENTS} clients, same server: ${median(plain).toFixed(1)} ms`,
    ratio: `${(median(after) / median(plain)).toFixed(2)}× the ceiling's p99`,
    target: "p99 ≤ 50 ms; every read shows its command's result (checked); no polling wait on the request path",
    met: median(after) <= 50,
    command: "npx tsx scripts/bench/http-postgres.ts",
    notes: [
      `the API server as shipped (src/main.ts: metrics, the tracing API without an SDK, keys' last-used on); ${ROUNDS} rounds of ${SECONDS} s alternating reads of the client's own payment and of a payment nobody writes, both right after the client's create + authorize; p99 ${after.map((x) => x.toFixed(1)).join("/")} vs ${plain.map((x) => x.toFixed(1)).join("/")} ms; reads after a command ${reads.map(Math.round).join("/")}/s`,
      `floor: the same read alone (64 clients reading a payment nobody writes, no commands), p99 ${alone.map((x) => x.toFixed(1)).join("/")} ms`,
      `the reads load the payment from the engine's cached state and the stream's tail (readStream), so they do not wait for the projections; ${load()}`,
    ],
  };
}

/** Row 10: CLIENTS clients each running create -> authorize -> capture, with who takes the CPU. */
async function fullFlows() {
  // who takes the CPU while the flows run: this process (the clients), the API server, PostgreSQL
  const cpu = cpuMeter({ clients: () => [process.pid], "API server": () => [real.child.pid!], PostgreSQL: () => (server ? postgresPids(Number(new URL(url).port)) : []) });
  const flowRuns: number[] = [];
  await httpFlows(real.ready, CLIENTS); // warm-up
  cpu.start();
  for (let r = 0; r < ROUNDS; r++) flowRuns.push(await httpFlows(real.ready, CLIENTS));
  const shares = cpu.stop();
  const flows = median(flowRuns);
  return {
    row: "10",
    figure: `HTTP full stored-card flows/s (create + authorize + capture over HTTP), ${CLIENTS} concurrent clients, PostgreSQL store`,
    value: fmtRate(flows, "flows/s"),
    ceiling: "—",
    ratio: "—",
    target: "≥ 1,000 flows/s",
    met: flows >= 1000,
    command: "npx tsx scripts/bench/http-postgres.ts",
    notes: [
      `the API server as shipped (src/main.ts: sandbox, LOG_LEVEL info, metrics on, the tracing API without an SDK, keys' last-used recorded); a warm-up run of ${SECONDS} s, then ${ROUNDS} rounds of ${SECONDS} s (${flowRuns.map(Math.round).join("/")} flows/s); client, API server and PostgreSQL share the machine's cores; ${load()}`,
      `CPU during the flows: ${fmtShares(shares)}; per flow: API server ${((shares["API server"]! * 10) / flows).toFixed(1)} ms, PostgreSQL ${((shares.PostgreSQL! * 10) / flows).toFixed(1)} ms, clients ${((shares.clients! * 10) / flows).toFixed(1)} ms`,
    ],
  };
}
