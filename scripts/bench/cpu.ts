// Who takes the CPU during a benchmark (Linux /proc; elsewhere every figure is NaN): the CPU time
// of given processes, and of the whole machine, between start() and stop(), as a share of one
// core (100% = one core busy for the whole interval).
import { readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on Linux

/** utime + stime of a process, in ticks; 0 once it has gone. */
function ticks(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

const parentOf = (pid: number) => {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
  } catch {
    return -1;
  }
};

/** The PostgreSQL server listening on `port` (its postmaster, found by its command line) and its backends. */
export function postgresPids(port: number): number[] {
  let pids: number[];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number);
  } catch {
    return [];
  }
  const cmdline = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      return [];
    }
  };
  const master = pids.find((p) => {
    const args = cmdline(p);
    return /postgres$/.test(args[0] ?? "") && args.includes(String(port));
  });
  return master === undefined ? [] : [master, ...pids.filter((p) => parentOf(p) === master)];
}

function machine(): { busy: number; total: number } {
  try {
    const [, ...fields] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/);
    const n = fields.slice(0, 8).map(Number);
    const total = n.reduce((s, x) => s + x, 0);
    return { busy: total - n[3]! - n[4]!, total }; // idle and iowait are not busy
  } catch {
    return { busy: NaN, total: NaN };
  }
}

export type CpuShares = Record<string, number> & { machine: number };

/**
 * Measures the CPU of named groups of processes (looked up again every 100 ms: backends come and
 * go) from start() to stop(). Shares are % of one core; `machine` is the whole machine's busy share
 * (on this 2-core machine at most 200%), other users' work included.
 */
export function cpuMeter(groups: Record<string, () => number[]>) {
  // per process: its group, its ticks when first seen (0 if it started during the run) and when
  // last seen (sampled every 100 ms: a backend that exits before stop() keeps what it used)
  const seen = new Map<number, { group: string; first: number; last: number }>();
  let began: { at: number; m: ReturnType<typeof machine> } | undefined;
  let timer: NodeJS.Timeout | undefined;
  const sample = () => {
    for (const [group, pids] of Object.entries(groups)) {
      for (const p of pids()) {
        const t = ticks(p);
        const s = seen.get(p);
        if (!s) seen.set(p, { group, first: began ? 0 : t, last: t });
        else if (t > 0) s.last = t;
      }
    }
  };
  return {
    start() {
      seen.clear();
      began = undefined;
      sample();
      began = { at: performance.now(), m: machine() };
      timer = setInterval(sample, 100);
      timer.unref();
    },
    stop(): CpuShares {
      clearInterval(timer);
      sample();
      const seconds = (performance.now() - began!.at) / 1000;
      const m = machine();
      const shares: Record<string, number> = Object.fromEntries(Object.keys(groups).map((g) => [g, 0]));
      for (const { group, first, last } of seen.values()) shares[group]! += ((last - first) / TICKS_PER_SECOND / seconds) * 100;
      return { ...shares, machine: ((m.busy - began!.m.busy) / (m.total - began!.m.total)) * cpus().length * 100 };
    },
  };
}

export const fmtShares = (s: CpuShares) =>
  `${Object.entries(s)
    .filter(([k]) => k !== "machine")
    .map(([k, v]) => `${k} ${Math.round(v)}%`)
    .join(", ")} of one core; the machine ${Math.round(s.machine)}% of ${cpus().length * 100}% busy (other users' work included)`;
