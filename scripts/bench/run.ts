// npm run bench [-- --quick] [-- --max-wait=<seconds>] [-- --rows=15,4]: runs every benchmark script in its own process (so one row's heap
// does not weigh on the next), collects their rows and writes docs/BENCHMARKS.md (with --rows, only
// those rows' scripts run and only their lines of the page are replaced, the header saying so). Rows whose
// pieces are not on main yet are listed as pending. Before each invocation it waits until the
// 1-minute load average is below 1.0 (up to 5 minutes) and refuses to run the rows if it is still
// above then (they are written as refused, with the load); each row's notes give the load at its
// start and end. --quick is the CI smoke run: tiny sizes, no wait and no refusal (the load is
// still noted), it checks that every benchmark runs and writes nothing.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { load1, LOAD_LIMIT, quick, RESULT_PREFIX, waitForLoad, type Row } from "./lib.js";

interface Bench {
  /** The rows this invocation produces (a script giving several rows may be run once per row or group). */
  rows: string[];
  script: string;
  /** Arguments selecting those rows. */
  args?: string[];
  /** Files that must exist on main for the benchmark to run. */
  needs: string[];
  title: string;
}

// One invocation per row where the script can give rows alone, so each row starts on a quiet
// machine (the load gate runs before each invocation). Row numbers: 12 perf (Emmett peer);
// 13, 14 read side (mixed load, lists at scale); 15 security (noisy neighbour): /work/wt/STATUS.md.
const BENCHES: Bench[] = [
  { rows: ["1"], script: "scripts/bench/replay.ts", needs: [], title: "replay through the machine" },
  { rows: ["2", "3"], script: "scripts/bench/durable.ts", args: ["--sqlite-only"], needs: [], title: "durable append and stored-card flows on SQLite" },
  { rows: ["4"], script: "scripts/bench/http.ts", args: ["--row=4"], needs: [], title: "HTTP status read" },
  { rows: ["5"], script: "scripts/bench/http.ts", args: ["--row=5"], needs: [], title: "HTTP full flows on SQLite" },
  { rows: ["6"], script: "scripts/bench/rebuild.ts", needs: [], title: "projection rebuild from zero, 1M events in SQLite" },
  { rows: ["7"], script: "scripts/bench/durable.ts", args: ["--postgres-only"], needs: [], title: "durable append and stored-card flows on PostgreSQL" },
  { rows: ["8"], script: "scripts/bench/memory.ts", needs: [], title: "RSS after 100k payments through the engine" },
  { rows: ["9"], script: "scripts/bench/http-postgres.ts", args: ["--row=9"], needs: [], title: "PostgreSQL read-your-writes, 64 clients" },
  { rows: ["10"], script: "scripts/bench/http-postgres.ts", args: ["--row=10"], needs: [], title: "PostgreSQL HTTP flows, 64 clients" },
  { rows: ["11"], script: "scripts/bench/webhooks.ts", needs: ["src/webhooks/index.ts"], title: "webhook delivery latency, append to receiver" },
  { rows: ["12"], script: "scripts/bench/peer-emmett.ts", needs: [], title: "stored-card flows side by side with Emmett on PostgreSQL" },
  { rows: ["13a"], script: "scripts/bench/mixed.ts", args: ["--store=sqlite"], needs: [], title: "mixed load over HTTP, 64 clients, SQLite" },
  { rows: ["13b"], script: "scripts/bench/mixed.ts", args: ["--store=postgres"], needs: [], title: "mixed load over HTTP, 64 clients, PostgreSQL" },
  { rows: ["14a"], script: "scripts/bench/lists.ts", args: ["--store=sqlite"], needs: [], title: "lists at 1M payments, 16 readers, SQLite" },
  { rows: ["14b"], script: "scripts/bench/lists.ts", args: ["--store=postgres"], needs: [], title: "lists at 1M payments, 16 readers, PostgreSQL" },
  { rows: ["15"], script: "scripts/bench/noisy-neighbour.ts", needs: ["src/webhooks/delivery-records.ts"], title: "another account's status-read p99 beside 16 timing-out webhook endpoints" },
];

/** What stands in the way of the targets not met: written by people, from profiles, kept beside the scripts. */
const ANALYSIS = "scripts/bench/analysis.md";

/** --max-wait=<seconds>: how long a row waits for a quiet machine (default 300). */
const maxWaitS = Number(process.argv.find((a) => a.startsWith("--max-wait="))?.slice(11) ?? 300);
/** --rows=15,4: re-measure those rows only (their scripts' other rows too), keeping the rest of the page. */
const only = process.argv.find((a) => a.startsWith("--rows="))?.slice(7).split(",");
const loadAtStart = os.loadavg();
/** The 1-minute load average at the start of each row measured (after its wait for a quiet machine). */
const rowLoads: number[] = [];
const rows: Row[] = [];
const failures: string[] = [];
for (const bench of BENCHES.filter((b) => !only || b.rows.some((r) => only.includes(r)))) {
  const missing = [bench.script, ...bench.needs].filter((f) => !existsSync(f));
  if (missing.length) {
    for (const row of bench.rows) {
      rows.push({ row, figure: bench.title, value: "pending", ceiling: "—", ratio: "—", target: "—", met: null, command: "—", notes: [`not measured: ${missing.join(", ")} not on main yet`] });
    }
    console.error(`rows ${bench.rows.join(", ")}: pending (${missing.join(", ")} missing)`);
    continue;
  }
  const gate = quick ? { load: os.loadavg()[0]!, waitedS: 0, refused: false } : await waitForLoad({ maxWaitMs: maxWaitS * 1000 });
  if (gate.refused) {
    for (const row of bench.rows) {
      const value = `refused: 1-minute load average ${gate.load.toFixed(2)} at its start, above ${LOAD_LIMIT.toFixed(1)} after waiting ${Math.round(gate.waitedS)} s`;
      rows.push({ row, figure: bench.title, value, ceiling: "—", ratio: "—", target: "—", met: null, command: "—", notes: ["not measured: the machine was busy (run nothing else while timing, then run npm run bench again)"] });
    }
    console.error(`rows ${bench.rows.join(", ")}: refused, load average ${gate.load.toFixed(2)} after ${Math.round(gate.waitedS)} s`);
    continue;
  }
  rowLoads.push(gate.load);
  console.error(`rows ${bench.rows.join(", ")}: ${[bench.script, ...(bench.args ?? [])].join(" ")} (load ${gate.load.toFixed(2)}, waited ${Math.round(gate.waitedS)} s)`);
  const run = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", bench.script, ...(bench.args ?? []), ...(quick ? ["--quick"] : [])], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 2 ** 20,
  });
  const loadNote = `1-minute load average ${gate.load.toFixed(2)} at the row's start${gate.waitedS >= 1 ? ` (after waiting ${Math.round(gate.waitedS)} s for it to fall below ${LOAD_LIMIT.toFixed(1)})` : ""}, ${load1()} at its end`;
  const found = run.stdout
    .split("\n")
    .filter((l) => l.startsWith(RESULT_PREFIX))
    .map((l) => JSON.parse(l.slice(RESULT_PREFIX.length)) as Row)
    .map((r) => ({ ...r, notes: [...(r.notes ?? []), loadNote] }));
  const unexpected = found.filter((r) => !bench.rows.includes(r.row)).map((r) => r.row);
  if (run.status !== 0 || found.length !== bench.rows.length || unexpected.length) {
    failures.push(`${bench.script} ${(bench.args ?? []).join(" ")} exited ${run.status} with rows [${found.map((r) => r.row).join(", ")}], expected [${bench.rows.join(", ")}]`);
  }
  rows.push(...found);
}

rows.sort((a, b) => a.row.localeCompare(b.row, "en", { numeric: true }));
const cell = (s: string) => s.replace(/\|/g, "\\|");
const verdict = (r: Row) => (r.value === "pending" ? "pending" : r.value.startsWith("refused") ? "**refused**" : r.met === null ? "reported" : r.met ? "**met**" : "**not met**");
const commit = (() => {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
})();
const machine = `${os.cpus().length} cores (${os.cpus()[0]?.model.trim() ?? "unknown CPU"}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GB RAM, Node ${process.version}, ${os.platform()} ${os.release()}; ${rowLoads.length ? `load average ${Math.min(...rowLoads).toFixed(2)}–${Math.max(...rowLoads).toFixed(2)} at the rows' starts (each row waits for it to fall below ${LOAD_LIMIT.toFixed(1)}), ` : ""}${loadAtStart.map((l) => l.toFixed(1)).join(" / ")} (1, 5, 15 minutes) when the run began`;

const doc = `# Benchmarks

Generated by \`npm run bench\` (scripts/bench/run.ts) at commit ${commit}, ${new Date().toISOString()}.

**Machine:** ${machine}.

Each figure is measured next to its ceiling or peer **in the same run** (the two alternate, round
after round) and reported as medians of several rounds; ratios are what to compare across
machines. Each row started only once the 1-minute load average was below ${LOAD_LIMIT.toFixed(1)} (waiting up to
${maxWaitS} s; a row still above it then is written as refused, not measured); its notes give the load
at its start and end (a row's own processes raise it while it runs). Re-run a row with its
command. No test asserts a timing: these scripts are the only place timings live.

**Profiles.** \`npx tsx scripts/bench/profile.ts --row=4|5|10|13a\` (13a: the mixed load on SQLite) runs
that row's script with its API server under \`node --cpu-prof\`, or with \`--perf\` under Linux
\`perf record\` (every thread and the kernel; prefer it where system calls matter), and prints where
the server's CPU went, by layer (projections, input parsing, hash chain, machine, store and driver,
engine, HTTP, GC, idle) and by function; the profile files stay under .tmp/prof/. \`npx tsx
scripts/bench/profile.ts <file.cpuprofile> [--top=30] ["name=regex" ...]\` or \`<file.perf.data>
[--under=regex]\` summarizes any profile.

| # | figure | value | ceiling (same run) | ratio | target | verdict | command |
|---|---|---|---|---|---|---|---|
${rows.map((r) => `| ${r.row} | ${cell(r.figure)} | ${cell(r.value)} | ${cell(r.ceiling)} | ${cell(r.ratio)} | ${cell(r.target)} | ${verdict(r)} | \`${cell(r.command)}\` |`).join("\n")}

## Notes per row

${rows.map((r) => `- **${r.row}.** ${(r.notes ?? []).join("; ") || "—"}`).join("\n")}
${existsSync(ANALYSIS) ? `\n${readFileSync(ANALYSIS, "utf8")}` : ""}`;

/** The page with only the measured rows' table line and note replaced, and a header line saying when. */
function patched(page: string): string {
  const lines = page.split("\n");
  const fresh = doc.split("\n");
  for (const r of rows) {
    // the row's table line and its note, each found by its start in both pages
    for (const start of [`| ${r.row} |`, `- **${r.row}.**`]) {
      const at = lines.findIndex((l) => l.startsWith(start));
      if (at < 0) throw new Error(`docs/BENCHMARKS.md has no row ${r.row} to replace: run npm run bench`);
      lines[at] = fresh.find((l) => l.startsWith(start))!;
    }
  }
  const header = lines.findIndex((l) => l.startsWith("Generated by"));
  lines.splice(header + 1, 0, `Row${rows.length > 1 ? "s" : ""} ${rows.map((r) => r.row).join(", ")} re-measured alone (\`npm run bench -- --rows=${only!.join(",")}\`) at commit ${commit}, ${new Date().toISOString()}${rowLoads.length ? `, load average ${rowLoads.map((l) => l.toFixed(2)).join(", ")} at the start` : ""}.`);
  return lines.join("\n");
}

if (quick) {
  console.error(rows.map((r) => `row ${r.row}: ${r.value}`).join("\n"));
  console.error("quick mode: docs/BENCHMARKS.md not written");
} else if (only) {
  writeFileSync("docs/BENCHMARKS.md", patched(readFileSync("docs/BENCHMARKS.md", "utf8")));
  console.error(`replaced rows ${rows.map((r) => r.row).join(", ")} of docs/BENCHMARKS.md`);
} else {
  writeFileSync("docs/BENCHMARKS.md", doc);
  console.error("wrote docs/BENCHMARKS.md");
}
if (failures.length) {
  console.error(`benchmark failures:\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
