// The durable rows, in one run on the same disk and the same PostgreSQL server:
// - row 2: append on SQLite at concurrency 1/16/64 next to one write + fdatasync per append
//   (scripts/bench/append.ts, the stores' own benchmark);
// - row 3: stored-card flows/s through the engine on SQLite, 64 concurrent, next to the SQLite
//   append rate at 64 divided by the events of a flow (measured again before each round);
// - row 7: PostgreSQL (embedded server, fsync on) append at 1/16/64 (append.ts again) and
//   stored-card flows/s at 1/16/64, next to single-row INSERT transactions/s on the same server.
//   npx tsx scripts/bench/durable.ts [--quick] [--postgres-only | --sqlite-only]   (row 7 alone | rows 2 and 3 alone;
//   npm run bench runs the two apart, each after its own load check)
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createEngine } from "../../src/engine.js";
import type { EventStore, ReadModelStore } from "../../src/store/port.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { startPostgres } from "../../test/support/postgres.js";
import { benchAppend } from "./append.js";
import { cpuMeter, fmtShares, postgresPids } from "./cpu.js";
import { EVENTS_PER_FLOW, flowsPerSecond, openBenchAccount } from "./flows.js";
import { emit, fmtRate, median, quick, type Row } from "./lib.js";

const RUNS = quick ? 1 : 3;
const postgresOnly = process.argv.includes("--postgres-only");
const sqliteOnly = process.argv.includes("--sqlite-only");
const MS = quick ? 200 : 2_000;
const CONCURRENCIES = [1, 16, 64];
const work = mkdtempSync(join(tmpdir(), "cardflow-durable-"));
const server = process.env.DATABASE_URL || sqliteOnly ? undefined : await startPostgres();
const url = process.env.DATABASE_URL ?? server?.url ?? "";
if (url) process.env.DATABASE_URL = url; // append.ts measures this server

/** CPU of this process (clients and engine) per flow of the last engineFlows() run, in µs. */
let lastCpuPerFlow = NaN;

/** Flows/s of `concurrency` clients through an engine on fresh stores (after a short warm-up). */
async function engineFlows(stores: { events: EventStore; readModels: ReadModelStore }, concurrency: number): Promise<number> {
  const engine = createEngine({ store: stores.events, readModels: stores.readModels });
  try {
    const card = await openBenchAccount(engine);
    await flowsPerSecond(engine, card, MS / 4, concurrency);
    const cpu = process.cpuUsage();
    const rate = await flowsPerSecond(engine, card, MS, concurrency);
    const used = process.cpuUsage(cpu);
    lastCpuPerFlow = (used.user + used.system) / ((rate * MS) / 1000);
    return rate;
  } finally {
    await engine.close();
  }
}

/** Single-row INSERT transactions/s: `clients` connections, each inserting one row per transaction. */
async function insertRate(clients: number): Promise<number> {
  const table = `bench_insert_${randomUUID().replaceAll("-", "").slice(0, 10)}`;
  const pool = new pg.Pool({ connectionString: url, max: clients });
  try {
    await pool.query(`CREATE TABLE ${table} (id bigserial PRIMARY KEY, stream text NOT NULL, data jsonb NOT NULL)`);
    let n = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async (_, w) => {
        const client = await pool.connect();
        try {
          while (performance.now() - start < MS) {
            await client.query(`INSERT INTO ${table} (stream, data) VALUES ($1, $2)`, [`s-${w}`, { amount: "10.00", n }]);
            n++;
          }
        } finally {
          client.release();
        }
      }),
    );
    const rate = (n * 1000) / (performance.now() - start);
    await pool.query(`DROP TABLE ${table}`);
    return rate;
  } finally {
    await pool.end();
  }
}

const pgStores = () => createPostgresStore({ connectionString: url, schema: `bench_${randomUUID().replaceAll("-", "").slice(0, 10)}` });

try {
  const figures = await benchAppend({ runs: RUNS, durationMs: MS, dir: work, concurrencies: CONCURRENCIES, sqlite: !postgresOnly, postgres: !sqliteOnly });
  const rate = (store: string, c: number) => figures.find((f) => f.store === store && f.concurrency === c)!.perSecond;
  const fsync = postgresOnly ? NaN : rate("fdatasync", 1);

  // row 3: rounds of (append@64, flows@64) on SQLite
  const flowRates: number[] = [];
  const flowCpu: number[] = [];
  const ceilings: number[] = [];
  for (let round = 0; round < (postgresOnly ? 0 : RUNS); round++) {
    const [append] = (await benchAppend({ concurrencies: [64], runs: 1, durationMs: MS, postgres: false, dir: work })).filter((f) => f.store === "sqlite");
    ceilings.push(append!.perSecond / EVENTS_PER_FLOW);
    flowRates.push(await engineFlows(createSqliteStore({ path: join(work, `engine-${round}.db`) }), 64));
    flowCpu.push(lastCpuPerFlow);
  }
  const flowRatio = median(flowRates.map((f, i) => f / ceilings[i]!));

  // row 7: PostgreSQL flows at 1/16/64, rounds alternating with the INSERT ceiling
  const pgFlows = new Map<number, number[]>(CONCURRENCIES.map((c) => [c, []]));
  const inserts: number[] = [];
  // who takes the CPU during the flows at 64: this process (clients and engine) and PostgreSQL
  const cpu = cpuMeter({ "clients + engine": () => [process.pid], PostgreSQL: () => (server ? postgresPids(Number(new URL(url).port)) : []) });
  const shares: ReturnType<typeof cpu.stop>[] = [];
  for (let round = 0; round < (sqliteOnly ? 0 : RUNS); round++) {
    inserts.push(await insertRate(64));
    for (const c of CONCURRENCIES) {
      const stores = await pgStores();
      if (c === 64) cpu.start();
      pgFlows.get(c)!.push(await engineFlows(stores, c));
      if (c === 64) shares.push(cpu.stop());
    }
  }
  const pgFlow = (c: number) => median(pgFlows.get(c)!);
  const insert = median(inserts);

  const sqliteRows = (): Row[] => [
    {
      row: "2",
      figure: "durable append, SQLite (WAL, synchronous=FULL, group commit), concurrency 1/16/64",
      value: CONCURRENCIES.map((c) => `${c}: ${fmtRate(rate("sqlite", c), "appends/s")}`).join("; "),
      ceiling: `one write + fdatasync per append, same disk: ${fmtRate(fsync, "/s")}`,
      ratio: CONCURRENCIES.map((c) => `${c}: ${(rate("sqlite", c) / fsync).toFixed(1)}×`).join("; "),
      target: "≥ 10× the ceiling at concurrency 64",
      met: rate("sqlite", 64) / fsync >= 10,
      command: "npx tsx scripts/bench/append.ts --no-postgres",
      notes: [
        `medians of ${RUNS} runs of ${MS} ms (fdatasync ${figures[0]!.runs.map(Math.round).join("/")}/s); appends per commit at 1/16/64: ${CONCURRENCIES.map((c) => figures.find((f) => f.store === "sqlite" && f.concurrency === c)!.appendsPerCommit?.toFixed(1)).join(" / ")}`,
        "one event per append, each caller on its own stream with an expected revision; event ids as the engine makes them (time-ordered UUIDs, src/ids.ts); a commit's appends go in a few statements (one lookup of the batch's ids, one of its streams' heads, multi-row INSERTs)",
      ],
    },
    {
      row: "3",
      figure: `stored-card flows/s in process (create + authorize + capture, ${EVENTS_PER_FLOW} events), durable SQLite, 64 concurrent`,
      value: fmtRate(median(flowRates), "flows/s"),
      ceiling: `SQLite append rate at 64 ÷ ${EVENTS_PER_FLOW}: ${fmtRate(median(ceilings), "flows/s")}`,
      ratio: `${flowRatio.toFixed(2)} of the ceiling`,
      target: "≥ 0.6 of the ceiling",
      met: flowRatio >= 0.6,
      command: "npx tsx scripts/bench/durable.ts --sqlite-only",
      notes: [
        `${RUNS} rounds, each an append@64 run then ${MS} ms of flows on a fresh database; flows ${flowRates.map(Math.round).join("/")}, ceilings ${ceilings.map(Math.round).join("/")} flows/s; the ratio is the median of the per-round ratios`,
        `CPU per flow (this process: the 64 clients and the engine, process.cpuUsage): ${flowCpu.map(Math.round).join("/")} µs, i.e. ${flowCpu.map((c) => Math.round(c / EVENTS_PER_FLOW)).join("/")} µs per append; load average ${loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end`,
      ],
    },
  ];
  const postgresRow = (): Row => ({
    row: "7",
    figure: "PostgreSQL (embedded, fsync on): append and stored-card flows/s at concurrency 1/16/64",
    value: `append ${CONCURRENCIES.map((c) => `${c}: ${fmtRate(rate("postgres", c), "/s")}`).join("; ")}; flows ${CONCURRENCIES.map((c) => `${c}: ${fmtRate(pgFlow(c), "/s")}`).join("; ")}`,
    ceiling: `single-row INSERT transactions, 64 clients, same server: ${fmtRate(insert, "/s")}`,
    ratio: `append@64 ${(rate("postgres", 64) / insert).toFixed(2)}×; flows@64 × ${EVENTS_PER_FLOW} events ${((pgFlow(64) * EVENTS_PER_FLOW) / insert).toFixed(2)}× of the ceiling`,
    target: `≥ 2,000 flows/s at 64 concurrent and flows@64 × ${EVENTS_PER_FLOW} events ≥ 0.9 of the ceiling`,
    met: pgFlow(64) >= 2000 && (pgFlow(64) * EVENTS_PER_FLOW) / insert >= 0.9,
    command: "npx tsx scripts/bench/durable.ts --postgres-only",
    notes: [
      `medians of ${RUNS} rounds of ${MS} ms; INSERT ceiling ${inserts.map(Math.round).join("/")}/s; flows@64 ${pgFlows.get(64)!.map(Math.round).join("/")}/s; the store's pool has 10 connections (its default); appends go in group commits (src/store/postgres.ts: up to 2 batches in flight, one statement and one transaction each; the batch's checks set-based and its events in one multi-row INSERT, append_batch_set), each followed by a NOTIFY for other processes`,
      `CPU during the flows@64 (last round, warm-up included): ${fmtShares(shares[shares.length - 1]!)}`,
      "side by side with a leading TypeScript event-sourcing library (Emmett) on the same server, same flow: row 12",
    ],
  });
  emit([...(postgresOnly ? [] : sqliteRows()), ...(sqliteOnly ? [] : [postgresRow()])]);
} finally {
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
}
