// Row 3 — stored-card flows/s in process (create + authorize + capture), 64 concurrent clients,
// on the in-memory store (the durable SQLite run replaces it once src/store/sqlite.ts is on main).
//   npx tsx scripts/bench/engine.ts [--quick]
import { createEngine } from "../../src/engine.js";
import { EVENTS_PER_FLOW, openBenchAccount, runFlows } from "./flows.js";
import { emit, fmtRate, median, quick, seconds } from "./lib.js";

const CONCURRENCY = 64;
const FLOWS = quick ? 200 : 10_000;
const ROUNDS = quick ? 1 : 5;

const engine = createEngine();
await openBenchAccount(engine);
await runFlows(engine, quick ? 50 : 2_000, CONCURRENCY); // warm-up
const rates: number[] = [];
for (let i = 0; i < ROUNDS; i++) rates.push(FLOWS / (await seconds(() => runFlows(engine, FLOWS, CONCURRENCY))));
await engine.close();

const rate = median(rates);
emit([
  {
    row: "3",
    figure: `stored-card flows/s in process (create + authorize + capture), ${CONCURRENCY} concurrent, in-memory store`,
    value: fmtRate(rate, "flows/s"),
    ceiling: "— (the durable ceiling needs the SQLite store and row 2's fsync loop)",
    ratio: "—",
    target: "≥ 0.5 of (durable append rate ÷ events per flow), SQLite",
    met: null,
    command: "npx tsx scripts/bench/engine.ts",
    notes: [`median of ${ROUNDS} rounds of ${FLOWS.toLocaleString("en-US")} flows (${rates.map((r) => Math.round(r)).join("/")} flows/s), ${EVENTS_PER_FLOW} events per flow`],
  },
]);
