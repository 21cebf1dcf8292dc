// Row 8 — memory: RSS after 100k payments through the engine in one process (stored-card flows,
// 64 concurrent) on the durable SQLite store (events and read models on disk), sampled after a
// forced GC every 10k payments: flat after warm-up means the engine's caches are bounded.
//   node --expose-gc --import tsx scripts/bench/memory.ts [--quick]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine } from "../../src/engine.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { openBenchAccount, runFlows } from "./flows.js";
import { emit, quick } from "./lib.js";

const PAYMENTS = quick ? 1_000 : 100_000;
const SAMPLE = PAYMENTS / 10;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const mb = () => {
  gc();
  return process.memoryUsage().rss / 2 ** 20;
};

const work = mkdtempSync(join(tmpdir(), "cardflow-memory-"));
const { events, readModels } = createSqliteStore({ path: join(work, "events.db") });
const engine = createEngine({ store: events, readModels });
const card = await openBenchAccount(engine);
const samples: [number, number][] = [[0, mb()]];
await runFlows(engine, card, PAYMENTS, 64, { interval: SAMPLE, run: (done) => void samples.push([done, mb()]) });
const { heapUsed, heapTotal, external } = process.memoryUsage();
const heap = heapUsed / 2 ** 20;
const outside = `heap reserved ${(heapTotal / 2 ** 20).toFixed(0)} MB, external (buffers, SQLite statements' JS side) ${(external / 2 ** 20).toFixed(0)} MB`;
await engine.close();
rmSync(work, { recursive: true, force: true });

const at = (n: number) => samples.find(([done]) => done >= n)![1];
const final = samples[samples.length - 1]![1];
// warm-up: the first 20%; "flat" allows 10% growth over the rest
const warm = at(PAYMENTS * 0.2);
const growth = (final - warm) / warm;
emit([
  {
    row: "8",
    figure: `memory: RSS after ${PAYMENTS.toLocaleString("en-US")} payments through the engine in one process (SQLite store)`,
    value: `${final.toFixed(0)} MB`,
    ceiling: "—",
    ratio: `${(growth * 100).toFixed(0)}% growth after warm-up (${warm.toFixed(0)} MB at ${(PAYMENTS * 0.2).toLocaleString("en-US")})`,
    target: "≤ 200 MB, flat after warm-up (≤ 10% growth from 20% to 100% of the payments)",
    met: final <= 200 && growth <= 0.1,
    command: "node --expose-gc --import tsx scripts/bench/memory.ts",
    notes: [`RSS after GC every ${SAMPLE.toLocaleString("en-US")} payments: ${samples.map(([n, r]) => `${n / 1000}k ${r.toFixed(0)}`).join(", ")} MB; heap used at the end ${heap.toFixed(0)} MB (${outside}); the rest of RSS is native: SQLite's page caches, the worker threads' isolates, malloc's arenas`],
  },
]);
