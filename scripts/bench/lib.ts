// Shared by the benchmarks: the quick flag, medians over repeated runs, percentiles, the result line each
// row script prints for scripts/bench/run.ts to collect into docs/BENCHMARKS.md, and the load gate
// run.ts passes before each row.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

/** CI smoke mode: tiny sizes, one run; it checks that the benchmarks run, not their speed. */
export const quick = process.argv.includes("--quick");

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** The p-th percentile (nearest rank, 0 < p < 100); NaN for no samples. */
export const percentile = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

/** Seconds taken by one call (awaited). */
export async function seconds(run: () => unknown): Promise<number> {
  const start = performance.now();
  await run();
  return (performance.now() - start) / 1000;
}

/**
 * Returns in a process started with the V8 `flags`: without them, runs this script again with them
 * (its arguments, its loaders) and exits with its code. For flags V8 reads only at start.
 */
export function withV8Flags(flags: string[]): void {
  if (flags.every((f) => process.execArgv.includes(f))) return;
  const again = spawnSync(process.execPath, [...process.execArgv, ...flags, ...process.argv.slice(1)], { stdio: "inherit" });
  process.exit(again.status ?? 1);
}

export interface Sliced {
  /** Starts one round: returns the function that does slice i (0-based) of the work. */
  start(): (slice: number) => unknown;
  slices: number;
  /** Items done by all slices together (events, flows...). */
  items: number;
}

export interface Rates {
  median: number;
  rates: number[];
}

/**
 * Rates (items/s) of contenders measured slice by slice in alternation (A1 B1 C1 A2 B2 C2 ...),
 * each slice some tens of milliseconds, so the shared machine's load swings hit them alike;
 * one warm-up round, then `rounds` rounds. Returns each contender's rate per round and median.
 */
export async function interleave<K extends string>(rounds: number, contenders: Record<K, Sliced>): Promise<Record<K, Rates>> {
  const keys = Object.keys(contenders) as K[];
  const rates = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  const most = Math.max(...keys.map((k) => contenders[k].slices));
  for (let round = -1; round < rounds; round++) {
    const runs = keys.map((k) => contenders[k].start());
    const spent = keys.map(() => 0);
    for (let i = 0; i < most; i++) {
      for (const [j, k] of keys.entries()) {
        if (i >= contenders[k].slices) continue;
        const start = performance.now();
        await runs[j]!(i);
        spent[j]! += performance.now() - start;
      }
    }
    if (round >= 0) for (const [j, k] of keys.entries()) rates[k].push(contenders[k].items / (spent[j]! / 1000));
  }
  return Object.fromEntries(keys.map((k) => [k, { median: median(rates[k]), rates: rates[k] }])) as Record<K, Rates>;
}

/** Median of the per-round ratios a/b (rounds ran side by side). */
export const ratioOf = (a: Rates, b: Rates): number => median(a.rates.map((r, i) => r / b.rates[i]!));

/** One line of the results table. `met` is null for a figure reported without a target. */
export interface Row {
  row: string;
  figure: string;
  value: string;
  ceiling: string;
  ratio: string;
  target: string;
  met: boolean | null;
  command: string;
  notes?: string[];
}

export const RESULT_PREFIX = "BENCH_ROW ";

/** Prints the rows for run.ts (and a readable summary for a person running one script). */
export function emit(rows: Row[]): void {
  for (const r of rows) {
    console.error(`row ${r.row} ${r.figure}: ${r.value} | ceiling ${r.ceiling} | ratio ${r.ratio} | target ${r.target} | ${r.met === null ? "reported" : r.met ? "met" : "NOT met"}`);
    console.log(RESULT_PREFIX + JSON.stringify(r));
  }
}

export const fmtRate = (n: number, unit: string) => `${Math.round(n).toLocaleString("en-US")} ${unit}`;
export const fmtRatio = (n: number) => (n >= 10 ? `${n.toFixed(0)}×` : `${n.toFixed(2)}×`);

/** A row is timed only on a machine whose 1-minute load average is below this (issue 27: nothing else running). */
export const LOAD_LIMIT = 1.0;

export interface LoadGate {
  /** The 1-minute load average when the row was let start (or refused). */
  load: number;
  /** Seconds spent waiting for the load to fall. */
  waitedS: number;
  /** The load was still above LOAD_LIMIT when the wait ran out: the row is not run. */
  refused: boolean;
}

/**
 * Waits until the 1-minute load average is below `limit`, looking every `pollMs`, for at most
 * `maxWaitMs` (a row just finished by the same run leaves ~1-2 behind, which decays in about a
 * minute); refuses when it is still above `limit` then. Clock, sleep and load are injectable (tests).
 */
export async function waitForLoad({
  limit = LOAD_LIMIT,
  maxWaitMs = 5 * 60_000,
  pollMs = 5_000,
  load = () => loadavg()[0]!,
  now = () => performance.now(),
  sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
}: {
  limit?: number;
  maxWaitMs?: number;
  pollMs?: number;
  load?: () => number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
} = {}): Promise<LoadGate> {
  const start = now();
  for (;;) {
    const current = load();
    const waited = now() - start;
    if (current < limit) return { load: current, waitedS: waited / 1000, refused: false };
    if (waited >= maxWaitMs) return { load: current, waitedS: waited / 1000, refused: current > limit };
    await sleep(Math.min(pollMs, maxWaitMs - waited));
  }
}

/** The 1-minute load average, as the rows' notes print it. */
export const load1 = () => loadavg()[0]!.toFixed(2);

/**
 * A profiled server's node flags (scripts/bench/profile.ts): CPU_PROF=<dir> writes a --cpu-prof
 * profile in <dir>/<name> when the server stops; PERF=<dir> names JIT frames for `perf`, which
 * recordPerf() then attaches.
 */
export const profileFlags = (name: string): string[] =>
  process.env.CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${join(process.env.CPU_PROF, name)}`] : process.env.PERF ? ["--perf-basic-prof-only-functions"] : [];

/** PERF=<dir>: `perf record` samples the process (every thread, the kernel's work for it) until it exits, into <dir>/<name>.perf.data. */
export function recordPerf(pid: number, name: string): void {
  if (!process.env.PERF) return;
  mkdirSync(process.env.PERF, { recursive: true });
  spawn("perf", ["record", "-F", "999", "-g", "-p", String(pid), "-o", join(process.env.PERF, `${name}.perf.data`)], { stdio: "ignore" });
}
