// Row 12 — cardflow side by side with Emmett (@event-driven-io/emmett-postgresql, the leading
// TypeScript event-sourcing library) on the same PostgreSQL server (embedded, fsync on): the same
// stored-card flow (create + authorize + capture, the same events and money checks; Emmett's is
// written its own way, scripts/bench/peer/emmett-payment.ts) at concurrency 1, 16 and 64,
// alternating run by run (cardflow first in rounds 1, 3, ..., Emmett first in rounds 2, 4, ...), each run on a
// fresh database after a warm-up. Each contender runs in its own process (scripts/bench/peer/
// worker.ts); this one drives them and reads PostgreSQL's CPU while they are timed. Before the
// timed rounds, each runs a few flows one at a time with its statements counted, so the row says
// what each sends per flow (round trips, commits) next to the rates.
//   npx tsx scripts/bench/peer-emmett.ts [--quick]
//   npx tsx scripts/bench/peer-emmett.ts --counts   untimed: what each sends per flow, and each
//     contender's own CPU per flow (process.cpuUsage) at concurrency 1 and 64; prints, writes no row
import { fork, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startPostgres } from "../../test/support/postgres.js";
import { cpuMeter, postgresPids } from "./cpu.js";
import { emit, fmtRate, fmtRatio, load1, median, quick, type Rates, ratioOf } from "./lib.js";
import type { Contender, CountResult, Job, RunResult } from "./peer/worker.js";

const ROUNDS = quick ? 2 : 3;
const MS = quick ? 150 : 3_000;
const COUNT_FLOWS = quick ? 10 : 50;
const CONCURRENCIES = [1, 16, 64] as const;
const CONTENDERS: Contender[] = ["cardflow", "emmett"];

const server = process.env.DATABASE_URL ? undefined : await startPostgres();
const url = process.env.DATABASE_URL ?? server!.url;
const emmettVersion = (JSON.parse(readFileSync("node_modules/@event-driven-io/emmett-postgresql/package.json", "utf8")) as { version: string }).version;

/** A contender's process, taking one job at a time. */
function startWorker(contender: Contender) {
  const child: ChildProcess = fork(fileURLToPath(new URL("./peer/worker.ts", import.meta.url)), [contender, url], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  let onTiming: () => void = () => undefined;
  let pending: { resolve: (r: unknown) => void; reject: (e: Error) => void } | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`${contender} worker exited ${code} before it was ready`)));
    child.on("message", (m: { ready?: true; timing?: true; result?: unknown; error?: string }) => {
      if (m.ready) resolve();
      else if (m.timing) onTiming();
      else if (pending) {
        const p = pending;
        pending = undefined;
        if (m.error !== undefined) p.reject(new Error(`${contender}: ${m.error}`));
        else p.resolve(m.result);
      }
    });
  });
  child.on("exit", (code) => pending?.reject(new Error(`${contender} worker exited ${code}`)));
  const send = <R>(job: Job, timing?: () => void) =>
    new Promise<R>((resolve, reject) => {
      onTiming = timing ?? (() => undefined);
      pending = { resolve: resolve as (r: unknown) => void, reject };
      child.send(job);
    });
  return {
    ready,
    run: (concurrency: number, timing: () => void) => send<RunResult>({ job: "run", concurrency, ms: MS }, timing),
    count: () => send<CountResult>({ job: "count", flows: COUNT_FLOWS }),
    stop: () => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once("exit", () => resolve()), child.send({ job: "exit" })))),
  };
}

async function serverVersion(): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return ((await c.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v).split(" ")[0]!;
  } finally {
    await c.end();
  }
}

const statements = (r: CountResult) => {
  const total = Object.values(r.statements).reduce((a, b) => a + b, 0);
  const kinds = Object.entries(r.statements)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${+n.toFixed(2)}`)
    .join(", ");
  return `${+total.toFixed(2)} statements (${kinds}), ${+r.commits.toFixed(2)} commits that write, ${+r.walSyncs.toFixed(2)} WAL syncs to disk and ${+r.walRecords.toFixed(1)} WAL records (pg_stat_wal)`;
};

const workers = { cardflow: startWorker("cardflow"), emmett: startWorker("emmett") };
try {
  await Promise.all(Object.values(workers).map((w) => w.ready));
  const version = await serverVersion();

  // untimed: what each sends to PostgreSQL per flow, one flow at a time
  const counts = { cardflow: await workers.cardflow.count(), emmett: await workers.emmett.count() };
  if (process.argv.includes("--counts")) {
    for (const k of CONTENDERS) {
      console.log(`${k}: ${statements(counts[k])}`);
      for (const c of [1, 64]) console.log(`  CPU per flow at concurrency ${c}: ${Math.round((await workers[k].run(c, () => undefined)).cpuUsPerFlow)} µs`);
    }
  } else await timed(counts, version);
} finally {
  await Promise.all(Object.values(workers).map((w) => w.stop()));
  await server?.stop();
}

/** The timed rounds and the row. */
async function timed(counts: Record<Contender, CountResult>, version: string) {
  // timed: rounds alternating the contenders at each concurrency; PostgreSQL's CPU while each is timed
  const pgCpu = cpuMeter({ PostgreSQL: () => (server ? postgresPids(Number(new URL(url).port)) : []) });
  type Sample = RunResult & { pgMsPerFlow: number };
  const samples = Object.fromEntries(CONTENDERS.map((k) => [k, Object.fromEntries(CONCURRENCIES.map((c) => [c, [] as Sample[]]))])) as Record<Contender, Record<number, Sample[]>>;
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of CONCURRENCIES) {
      for (const k of round % 2 ? [...CONTENDERS].reverse() : CONTENDERS) {
        const result = await workers[k].run(c, () => pgCpu.start());
        const share = pgCpu.stop().PostgreSQL!;
        samples[k][c]!.push({ ...result, pgMsPerFlow: (share * 10) / result.rate });
        console.error(`round ${round + 1} ${k} at ${c}: ${Math.round(result.rate)} flows/s`);
      }
    }
  }

  const rates = (k: Contender, c: number): Rates => {
    const xs = samples[k][c]!.map((s) => s.rate);
    return { median: median(xs), rates: xs };
  };
  const ratio = (c: number) => ratioOf(rates("cardflow", c), rates("emmett", c));
  const perFlow = (k: Contender, c: number, f: (s: Sample) => number) => samples[k][c]!.map(f);
  const list = (xs: number[], digits = 0) => xs.map((x) => x.toFixed(digits)).join("/");
  const byConcurrency = (f: (c: number) => string) => CONCURRENCIES.map((c) => `${c}: ${f(c)}`).join("; ");

  emit([
    {
      row: "12",
      figure: `stored-card flows/s in process (create + authorize + capture), cardflow next to Emmett ${emmettVersion} (emmett-postgresql: a decider per payment, CommandHandler with expected versions, the same events and money checks), same PostgreSQL ${version} (embedded, fsync on), concurrency 1/16/64`,
      value: `cardflow ${byConcurrency((c) => fmtRate(rates("cardflow", c).median, "/s"))}`,
      ceiling: `Emmett, alternating: ${byConcurrency((c) => fmtRate(rates("emmett", c).median, "/s"))}`,
      ratio: byConcurrency((c) => fmtRatio(ratio(c))),
      target: "≥ 1.0× at concurrency 1 and ≥ 4× at 64",
      met: ratio(1) >= 1 && ratio(64) >= 4,
      command: "npx tsx scripts/bench/peer-emmett.ts",
      notes: [
        `${ROUNDS} rounds; in each, at each concurrency, the two run ${MS} ms one after the other (cardflow first in rounds 1, 3, …, Emmett first in rounds 2, 4, …), each in its own process on a fresh database of the same server after a warm-up of ${MS / 4} ms; ratios are medians of the per-round ratios; flows/s cardflow ${byConcurrency((c) => list(rates("cardflow", c).rates))}, Emmett ${byConcurrency((c) => list(rates("emmett", c).rates))}`,
        `CPU per flow, the contender's process (its clients and the library, process.cpuUsage): cardflow ${byConcurrency((c) => `${list(perFlow("cardflow", c, (s) => s.cpuUsPerFlow))} µs`)}; Emmett ${byConcurrency((c) => `${list(perFlow("emmett", c, (s) => s.cpuUsPerFlow))} µs`)}; PostgreSQL's processes per flow: cardflow ${byConcurrency((c) => `${list(perFlow("cardflow", c, (s) => s.pgMsPerFlow), 2)} ms`)}; Emmett ${byConcurrency((c) => `${list(perFlow("emmett", c, (s) => s.pgMsPerFlow), 2)} ms`)}`,
        `sent to PostgreSQL per flow (${COUNT_FLOWS} flows one at a time, counted at the driver; each statement is a round trip): cardflow ${statements(counts.cardflow)}; Emmett ${statements(counts.emmett)}`,
        "cardflow: the engine over its PostgreSQL store with its defaults (pool of 10, no live projections), the flow of row 7; each command decides on the engine's cached state of the payment (no read: the append's expected revision catches another process's change, and the command then decides again on fresh state), appends the attempt before the processor call and its outcome after (5 events, 5 appends; each append joins a group commit: one statement, append_batch_set, holding the batch's checks and events, committed on its own), and after each group commit a pg_notify for other processes (coalesced; its own transaction, which writes a commit record but does not wait for its sync); the payment machine checks each event, the hash chain links them",
        `Emmett: getPostgreSQLEventStore with its default pool (pg.Pool, 10 connections) and its schema migrated once at start (its samples' setup); each command is one CommandHandler call: a connection for the command, the stream read and folded (evolve), the processor called, decide, then BEGIN, emt_append_to_stream (one statement: the expected version checked and the events inserted), COMMIT; so the attempt and its outcome are appended together after the call (5 events, 3 commits): a crash between the call and the commit leaves no record of what the processor did`,
        `processor: cardflow's simulator (processor B, in process) for both; ${load1()} 1-minute load average at the end`,
      ],
    },
  ]);
}
