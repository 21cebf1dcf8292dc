// CPU profiles for scripts/bench/analysis.md, in one command each:
//   npx tsx scripts/bench/profile.ts --row=4  [--quick] [--out=.tmp/prof]   the HTTP server of row 4 (SQLite status reads)
//   npx tsx scripts/bench/profile.ts --row=5  [--quick] [--out=.tmp/prof]   the HTTP server of row 5 (SQLite flows)
//   npx tsx scripts/bench/profile.ts --row=10 [--quick] [--out=.tmp/prof]   the HTTP server of row 10 (PostgreSQL flows)
//   npx tsx scripts/bench/profile.ts --row=13a [--seconds=60] [--quick]      the server of row 13a (the mixed load on SQLite)
// runs the row's own script (scripts/bench/http.ts --row=4|5, http-postgres.ts --row=10) with the API
// server under `node --cpu-prof` (CPU_PROF=<dir>: scripts/bench/http-lib.ts), then prints where the
// server's time went: by layer, then the top functions by self time. Its figures are the row's
// (printed too) but slower by the profiler's overhead: take the row's figures from npm run bench.
//   npx tsx scripts/bench/profile.ts --row=5 --perf [--quick]   the same row under Linux `perf record`
// (PERF=<dir>: scripts/bench/http-lib.ts), every thread of the server and the kernel's work for it,
// by layer and by function. Prefer it where system calls matter: --cpu-prof samples by a signal
// that lands on a thread returning from a system call far more often than its share of CPU (on row 4
// it gave the socket writes 36 % and SQLite's data_version 23 % of the busy samples; perf 20 % and
// 3.5 %), and it sees neither other threads nor the kernel.
//   npx tsx scripts/bench/profile.ts <file.perf.data> [--top=25] [--under=regex]   such a perf file again; with
// --under, only the samples with a frame matching the pattern (`--under=commitBatch@`: what a read-model commit spends)
//   npx tsx scripts/bench/profile.ts <file.cpuprofile> [--top=30] ["name=regex" ...]
// summarizes any `node --cpu-prof` profile: the top functions by self time, or (with categories)
// each sample given to the first category with a frame on its stack matching the category's
// pattern (frames read `function@path`, the path relative to the repository: `append@src/store/
// postgres.ts`, `query@node_modules/pg/lib/client.js`). Startup (module loading) is put apart so
// shares are of the steady state.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

const STARTUP = /module_job|loader|compileSourceTextModule|makeSyncRequest|waitForWorker/;

/**
 * The layers of a server's flow, in the order a sample is given to them: the first whose pattern
 * matches a frame on the sample's stack (so the store called by a projection counts as the
 * projection, the machine called by the store as the machine).
 */
const SERVER_CATEGORIES: [string, RegExp][] = [
  ["live projections", /@projections\/|@src\/store\/pump\.ts/],
  ["input parsing (zod)", /@node_modules\/zod\//],
  ["hash chain", /@src\/events\/|@src\/audit\/chain\.ts/],
  ["machine", /@machines\//],
  ["store and driver", /@src\/store\/|@node_modules\/(better-sqlite3|pg|pg-protocol|pg-pool)\//],
  ["engine", /@src\/engine|@src\/processors\//],
  ["HTTP (fastify, node's http, answers)", /@node_modules\/(fastify|find-my-way|avvio|light-my-request|fast-json-stringify|@fastify)\/|@src\/http\/|@node:_http|@node:net|@src\/api-keys/],
  ["GC", /^\(garbage collector\)@/],
  ["idle", /^\(idle\)@/],
];

const RUNS: Record<string, { script: string; args?: string[]; title: string }> = {
  "4": { script: "scripts/bench/http.ts", title: "row 4: HTTP status reads on SQLite, 50 connections (the bare route's server is profiled too, under bare/)" },
  "5": { script: "scripts/bench/http.ts", title: "row 5: HTTP stored-card flows on SQLite, 32 clients" },
  "10": { script: "scripts/bench/http-postgres.ts", title: "row 10: HTTP stored-card flows on PostgreSQL, 64 clients" },
  "13a": { script: "scripts/bench/mixed.ts", args: ["--store=sqlite"], title: "row 13a: the mixed load on SQLite, 64 clients (the server as shipped, warm-up included)" },
};

/** Shares of the profile's samples after startup: by category (the first matching), and by function (self time). */
function summarize(file: string, categories: [string, RegExp][], top: number): string[] {
  const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: ProfileNode[]; samples: number[] };
  const root = `file://${resolve(".")}/`;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const frame = (n: ProfileNode) => `${n.callFrame.functionName || "(anonymous)"}@${n.callFrame.url.startsWith(root) ? n.callFrame.url.slice(root.length) : n.callFrame.url.replace(/^file:\/\//, "")}`;
  const stacks = new Map<number, string[]>();
  const stackOf = (id: number) => {
    let stack = stacks.get(id);
    if (!stack) {
      stack = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(frame(byId.get(at)!));
      stacks.set(id, stack);
    }
    return stack;
  };
  const all = profile.samples.map(stackOf);
  const { samples: steady, byCategory, self } = tally(
    all.filter((stack) => !stack.some((f) => STARTUP.test(f))),
    categories,
  );
  const pct = (n: number) => `${((100 * n) / steady).toFixed(1).padStart(5)}%`;
  const lines = [`${all.length} samples, ${steady} after startup; shares of those`];
  if (categories.length) {
    const busy = steady - (byCategory.get("idle") ?? 0);
    lines.push(`by category (first match on the stack), of all samples and of the ${busy} busy ones (not idle):`);
    for (const [name, n] of ranked(byCategory)) lines.push(`${pct(n)} ${name === "idle" ? "      " : `${((100 * n) / busy).toFixed(1).padStart(5)}%`} ${name}`);
  }
  if (top > 0) lines.push(`top ${top} functions by self time:`, ...ranked(self, top).map(([name, n]) => `${pct(n)} ${name}`));
  return lines;
}

/** Samples (stacks, leaf first) by category (the first whose pattern matches a frame on the stack, else "other") and by leaf function (self time). */
function tally(stacks: Iterable<string[]>, categories: [string, RegExp][]) {
  const byCategory = new Map<string, number>();
  const self = new Map<string, number>();
  let samples = 0;
  for (const stack of stacks) {
    samples++;
    const category = categories.find(([, re]) => stack.some((f) => re.test(f)))?.[0] ?? "other";
    byCategory.set(category, (byCategory.get(category) ?? 0) + 1);
    self.set(stack[0]!, (self.get(stack[0]!) ?? 0) + 1);
  }
  return { samples, byCategory, self };
}

const ranked = (counts: Map<string, number>, top = Infinity) => [...counts].sort((a, b) => b[1] - a[1]).slice(0, top);

/** Categories for perf's samples: the server's layers, then native code the JS layers did not claim. */
const PERF_CATEGORIES: [string, RegExp][] = [
  ...SERVER_CATEGORIES.filter(([name]) => name !== "GC" && name !== "idle"),
  ["SQLite (C), the checkpoint worker", /@native:better_sqlite3\.node/],
  ["GC", /v8::internal::(Heap|Scavenge|MarkCompact|Sweeper|Concurrent|MinorGC|Memory)/],
  ["JIT compilers (V8's threads)", /v8::internal::(compiler|maglev|baseline)::|Builtins_CompileLazy/],
  ["kernel", /@kernel$/],
];

/**
 * Shares of `perf record -g` samples (every thread of the process, kernel included) by category
 * (first match on the stack) and by leaf function. Frames read as in summarize(): JIT frames from
 * node's perf map (`handler@src/http/route.ts`), native ones `symbol@native:<library>`, the
 * kernel's `symbol@kernel`.
 */
function summarizePerf(file: string, categories: [string, RegExp][], top: number, under?: RegExp): string[] {
  const script = spawnSync("perf", ["script", "-i", file, "-F", "ip,sym,dso"], { encoding: "utf8", maxBuffer: 2 ** 30 });
  if (script.status !== 0) throw new Error(`perf script: ${script.stderr}`);
  const root = `${resolve(".")}/`;
  const frame = (line: string) => {
    const m = /^\s*[0-9a-f]+ (.*?)(?:\+0x[0-9a-f]+)? \((.*)\)$/.exec(line);
    if (!m) return null;
    const [, sym = "", dso = ""] = m;
    const js = /^JS:[*^~]?(\S*) (.*?)(?::\d+:\d+)?$/.exec(sym);
    if (js) return `${js[1] || "(anonymous)"}@${js[2]!.replace(/^file:\/\//, "").replace(root, "")}`;
    if (dso.includes("kernel")) return `${sym}@kernel`;
    return `${sym}@native:${dso.split("/").pop()}`;
  };
  const stacks = script.stdout
    .split("\n\n")
    .map((block) => block.split("\n").map(frame).filter((f): f is string => f !== null))
    .filter((stack) => stack.length > 0 && (!under || stack.some((f) => under.test(f))));
  const { samples, byCategory, self } = tally(stacks, categories);
  const pct = (n: number) => `${((100 * n) / samples).toFixed(1).padStart(5)}%`;
  return [
    `${samples} samples (every thread, on CPU${under ? `, with a frame matching ${under}` : ""}); by category (first match on the stack):`,
    ...ranked(byCategory).map(([name, n]) => `${pct(n)} ${name}`),
    `top ${top} functions by self time:`,
    ...ranked(self, top).map(([name, n]) => `${pct(n)} ${name}`),
  ];
}

/** The newest main-thread profile in dir (CPU.<date>.<time>.<pid>.<thread>.<seq>: thread 0; tsx's loader thread writes one too). */
const newest = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f))
        .map((f) => join(dir, f))
        .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]
    : undefined;

const args = process.argv.slice(2);
const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const row = option("row");
const under = option("under") === undefined ? undefined : new RegExp(option("under")!);
if (row !== undefined) {
  const run = RUNS[row];
  if (!run) throw new Error(`--row=${row}: profiles are made for rows ${Object.keys(RUNS).join(" and ")}`);
  const dir = resolve(option("out") ?? ".tmp/prof", `row${row}-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  const perf = args.includes("--perf");
  console.error(`${run.title}: ${run.script} --row=${row}, the API server under ${perf ? "perf record" : "--cpu-prof"} (profiles in ${dir})`);
  const child = spawnSync(process.execPath, ["--import", "tsx", run.script, ...(run.args ?? [`--row=${row}`]), ...args.filter((a) => a === "--quick" || a.startsWith("--seconds="))], {
    env: { ...process.env, ...(perf ? { PERF: dir } : { CPU_PROF: dir }) },
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (child.status !== 0) throw new Error(`${run.script} exited ${child.status}`);
  if (perf) {
    // perf record stops when the server exits, and writes its file then
    for (let waited = 0; spawnSync("pgrep", ["-f", `-o ${dir}/`]).status === 0 && waited < 60_000; waited += 200) spawnSync("sleep", ["0.2"]);
    const file = join(dir, "real.perf.data");
    console.log(`API server profile: ${file}`);
    console.log(summarizePerf(file, PERF_CATEGORIES, Number(option("top") ?? 25), under).join("\n"));
    process.exit(0);
  }
  const file = newest(join(dir, "real"));
  if (!file) throw new Error(`no profile of the API server in ${join(dir, "real")}`);
  console.log(`API server profile: ${file}`);
  console.log(summarize(file, SERVER_CATEGORIES, Number(option("top") ?? 25)).join("\n"));
} else {
  const file = args.find((a) => !a.startsWith("--"));
  if (!file) throw new Error('usage: npx tsx scripts/bench/profile.ts --row=4|5|10|13a [--perf [--under=regex]] [--quick] [--out=dir] | <file.cpuprofile> [--top=30] ["name=regex" ...] | <file.perf.data> [--top=25] [--under=regex]');
  if (file.endsWith(".perf.data")) {
    console.log(summarizePerf(file, PERF_CATEGORIES, Number(option("top") ?? 25), under).join("\n"));
    process.exit(0);
  }
  const categories = args
    .filter((a) => !a.startsWith("--") && a !== file)
    .map((a): [string, RegExp] => [a.slice(0, a.indexOf("=")), new RegExp(a.slice(a.indexOf("=") + 1))]);
  console.log(summarize(file, categories, Number(option("top") ?? (categories.length ? 0 : 30))).join("\n"));
}
