// Where a `node --cpu-prof` profile's time goes, for scripts/bench/analysis.md: the top functions by
// self time, or (with categories) each sample given to the first category with a frame on its stack
// matching the category's pattern (frames read `function@file`). Startup (module loading) is put
// apart so shares are of the steady state.
//   npx tsx scripts/bench/profile.ts <file.cpuprofile> [--top=30] ["name=regex" ...]
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
const [file, ...args] = process.argv.slice(2);
if (!file) throw new Error("usage: npx tsx scripts/bench/profile.ts <file.cpuprofile> [--top=30] [\"name=regex\" ...]");
const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: ProfileNode[]; samples: number[] };
const top = Number(args.find((a) => a.startsWith("--top="))?.slice(6) ?? 30);
const STARTUP = /module_job|loader|compileSourceTextModule|makeSyncRequest|waitForWorker/;
const categories = [["startup", STARTUP] as const, ...args.filter((a) => !a.startsWith("--")).map((a) => [a.slice(0, a.indexOf("=")), new RegExp(a.slice(a.indexOf("=") + 1))] as const)];

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const frame = (n: ProfileNode) => `${n.callFrame.functionName || "(anonymous)"}@${n.callFrame.url.split("/").pop()}`;
const stackOf = (id: number) => {
  const frames: string[] = [];
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) frames.push(frame(byId.get(at)!));
  return frames;
};

const self = new Map<string, number>();
const byCategory = new Map<string, number>();
for (const id of profile.samples) {
  const stack = stackOf(id);
  const category = categories.find(([, re]) => stack.some((f) => re.test(f)))?.[0] ?? (categories.length > 1 ? "other" : "steady");
  byCategory.set(category, (byCategory.get(category) ?? 0) + 1);
  if (category !== "startup") self.set(stack[0]!, (self.get(stack[0]!) ?? 0) + 1);
}
const steady = profile.samples.length - (byCategory.get("startup") ?? 0);
const pct = (n: number) => `${((100 * n) / steady).toFixed(1).padStart(5)}%`;
console.log(`${profile.samples.length} samples, ${steady} after startup; shares of those`);
if (categories.length > 1) for (const [name, n] of [...byCategory].filter(([c]) => c !== "startup").sort((a, b) => b[1] - a[1])) console.log(pct(n), name);
else for (const [name, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(pct(n), name);
