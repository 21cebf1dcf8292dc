// Row 4 — HTTP status read (GET /v2/payment/intent/{id}): req/s and p99 with autocannon, 50
// connections, next to a bare fastify route answering the same JSON, rounds alternating.
// Row 5 — HTTP full flows/s: create + authorize + capture over HTTP, 32 concurrent clients (each
// an autocannon connection running the three requests in sequence).
// Each server runs in its own process (scripts/bench/http-server.ts: the real one is src/main.ts as
// shipped, metrics, tracing API and keys' last-used on); autocannon runs here.
//   npx tsx scripts/bench/http.ts [--quick] [--row=4|--row=5]  (default: both rows)
import type autocannon from "autocannon";
import { loadavg } from "node:os";
import { cpuMeter } from "./cpu.js";
import { authHeaders, httpFlows, run, SECONDS, start, stopped } from "./http-lib.js";
import { emit, fmtRate, median, quick } from "./lib.js";

const ROUNDS = quick ? 1 : 3;
const only = process.argv.find((a) => a.startsWith("--row="))?.slice(6);

const real = await start("real");
const { port, account, payment } = real.ready;
const headers = authHeaders(real.ready);
const statusPath = `/v2/payment/intent/${payment}?external_account_id=${account}`;
const body = await (await fetch(`http://127.0.0.1:${port}${statusPath}`, { headers })).text();
const bare = await start("bare", { BODY: body });

try {
  const rows: Parameters<typeof emit>[0] = [];
  if (only !== "5") rows.push(await statusRead());
  if (only !== "4") rows.push(await fullFlows());
  emit(rows);
} finally {
  await Promise.all([stopped(real.child), stopped(bare.child)]);
}

/**
 * One autocannon run against a server, with the server's own CPU per request (utime + stime of its
 * process ÷ requests, in µs): steadier than req/s on a shared machine, where the server gets
 * whatever share of the cores other work leaves it.
 */
async function measured(pid: number, opts: autocannon.Options) {
  const cpu = cpuMeter({ server: () => [pid] });
  cpu.start();
  const result = await run(opts);
  const share = cpu.stop().server!;
  return { result, cpuUs: ((share / 100) * SECONDS * 1e6) / result.requests.total };
}

/** Row 4: rounds alternating the real read and the bare route. */
async function statusRead() {
  const reads: autocannon.Result[] = [];
  const bares: autocannon.Result[] = [];
  const readCpu: number[] = [];
  const bareCpu: number[] = [];
  await run({ url: `http://127.0.0.1:${port}${statusPath}`, headers, connections: 50 }); // warm-ups
  await run({ url: `http://127.0.0.1:${bare.ready.port}${statusPath}`, connections: 50 });
  for (let r = 0; r < ROUNDS; r++) {
    const read = await measured(real.child.pid!, { url: `http://127.0.0.1:${port}${statusPath}`, headers, connections: 50 });
    reads.push(read.result);
    readCpu.push(read.cpuUs);
    const plain = await measured(bare.child.pid!, { url: `http://127.0.0.1:${bare.ready.port}${statusPath}`, connections: 50 });
    bares.push(plain.result);
    bareCpu.push(plain.cpuUs);
  }
  const bad = reads.reduce((n, r) => n + r.non2xx + r.errors, 0);
  if (bad) throw new Error(`status reads: ${bad} non-2xx answers or errors`);
  const readRps = median(reads.map((r) => r.requests.average));
  const bareRps = median(bares.map((r) => r.requests.average));
  const ratio = median(reads.map((r, i) => r.requests.average / bares[i]!.requests.average));
  const p99 = median(reads.map((r) => r.latency.p99));
  const bareP99 = median(bares.map((r) => r.latency.p99));
  return {
    row: "4",
    figure: "HTTP status read (GET /v2/payment/intent/{id}), autocannon 50 connections, SQLite store",
    value: `${fmtRate(readRps, "req/s")}, p99 ${p99} ms`,
    ceiling: `bare fastify route, same JSON: ${fmtRate(bareRps, "req/s")}, p99 ${bareP99} ms`,
    ratio: `${ratio.toFixed(2)} of the ceiling`,
    target: "≥ 0.6 of the ceiling's req/s; p99 ≤ 10 ms",
    met: ratio >= 0.6 && p99 <= 10,
    command: "npx tsx scripts/bench/http.ts",
    notes: [
      `the server as shipped (src/main.ts: sandbox, LOG_LEVEL info, metrics on, the tracing API without an SDK, keys' last-used recorded); ${ROUNDS} rounds of ${SECONDS} s alternating the two servers (each its own process; autocannon in a third); req/s ${reads.map((r) => Math.round(r.requests.average)).join("/")} vs ${bares.map((r) => Math.round(r.requests.average)).join("/")}; p99 ${reads.map((r) => r.latency.p99).join("/")} vs ${bares.map((r) => r.latency.p99).join("/")} ms; server CPU per request ${readCpu.map(Math.round).join("/")} vs ${bareCpu.map(Math.round).join("/")} µs; load average ${loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end`,
      `with 50 requests always in flight the mean latency is 50 ÷ req/s (Little's law): ${(50e3 / readRps).toFixed(1)} ms for the read, ${(50e3 / bareRps).toFixed(1)} ms for the bare route, whose own p99 is ${bareP99} ms: p99 ≤ 10 ms needs cores to spare for the server, which autocannon, the server and other work on 2 shared cores do not leave`,
      "the read authenticates the API key, loads the payment (the cached state, read again from its stream only when the store's change mark says something was appended since: SQLite data_version + this connection's commits) and presents the record, serialized by the code fast-json-stringify compiled from its answer schema (src/http/serializer.ts)",
    ],
  };
}

/** Row 5: each connection is a client running create -> authorize -> capture, again and again. */
async function fullFlows() {
  const flowRuns: number[] = [];
  const serverCpu: number[] = [];
  const clientCpu: number[] = [];
  await httpFlows(real.ready, 32); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    // CPU per flow: the server process (from /proc) and this one (autocannon's 32 clients)
    const cpu = cpuMeter({ server: () => [real.child.pid!] });
    cpu.start();
    const client = process.cpuUsage();
    const rate = await httpFlows(real.ready, 32);
    const server = cpu.stop().server!;
    const used = process.cpuUsage(client);
    const flowCount = rate * SECONDS;
    flowRuns.push(rate);
    serverCpu.push(((server / 100) * SECONDS * 1e6) / flowCount);
    clientCpu.push((used.user + used.system) / flowCount);
  }
  const flows = median(flowRuns);
  return {
    row: "5",
    figure: "HTTP full stored-card flows/s (create + authorize + capture over HTTP), 32 concurrent clients, SQLite store",
    value: fmtRate(flows, "flows/s"),
    ceiling: "—",
    ratio: "—",
    target: "≥ 1,500 flows/s on this 2-core machine",
    met: flows >= 1500,
    command: "npx tsx scripts/bench/http.ts",
    notes: [
      `the server as shipped (src/main.ts: sandbox, LOG_LEVEL info, metrics on, the tracing API without an SDK, keys' last-used recorded); a warm-up run of ${SECONDS} s, then ${ROUNDS} rounds of ${SECONDS} s (${flowRuns.map(Math.round).join("/")} flows/s); client and server share the machine's cores`,
      `CPU per flow: server ${serverCpu.map(Math.round).join("/")} µs, client (autocannon) ${clientCpu.map(Math.round).join("/")} µs; 1,500 flows/s on 2 cores leaves 1,333 µs per flow for both; load average ${loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end`,
    ],
  };
}
