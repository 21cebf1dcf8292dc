// Throughput of the audit tooling: N stored-card payments (create, authorize, capture, partial
// refund: 4 events each) appended by the engine, then replayStore, auditAll (chains, transitions,
// amounts, read models), export and import (verification included), on memory or SQLite.
//   npx tsx scripts/bench/audit.ts [payments=5000] [memory|sqlite]
import { performance } from "node:perf_hooks";
import { auditAll } from "../../src/audit/audit.js";
import { replayStore } from "../../src/audit/replay.js";
import { exportEvents, importEvents } from "../../src/audit/transfer.js";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryStore } from "../../src/store/memory/index.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import type { EventStore, ReadModelStore } from "../../src/store/port.js";

const payments = Number(process.argv[2] ?? 5000);
const kind = process.argv[3] ?? "memory";
const dir = mkdtempSync(join(tmpdir(), "cardflow-bench-audit-"));
const open = (name: string): { store: EventStore; readModels?: ReadModelStore } => {
  if (kind !== "sqlite") return { store: createMemoryStore() };
  const { events, readModels } = createSqliteStore({ path: join(dir, `${name}.db`) });
  return { store: events, readModels };
};
const engine = createEngine({ ...open("source"), clock: manualClock(), ids: sequentialIds() });
const account = { external_account_id: "acct_bench" };
await engine.openAccount({ ...account, processor: "A" });

const timed = async <T>(label: string, events: number, run: () => Promise<T>): Promise<T> => {
  const started = performance.now();
  const result = await run();
  const ms = performance.now() - started;
  console.log(`${label.padEnd(34)} ${ms.toFixed(0).padStart(7)} ms  ${Math.round((events / ms) * 1000).toLocaleString("en").padStart(10)} events/s`);
  return result;
};

const total = payments * 4 + 1;
await timed(`engine: ${payments} payments (hash chained)`, total, async () => {
  for (let i = 0; i < payments; i++) {
    const { payment_id } = await engine.createIntent({ ...account, amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
    await engine.authorize({ ...account, payment_id });
    await engine.capture({ ...account, payment_id, amount: "10.00" });
    await engine.refund({ ...account, payment_id, amount: "2.50" });
  }
  await engine.projections.catchUp();
});
const summary = await timed("replayStore", total, () => replayStore(engine.store));
const report = await timed("auditAll (with read models)", total, () => auditAll({ store: engine.store, readModels: engine.readModels }));
const lines = await timed("exportEvents", total, async () => {
  const out: string[] = [];
  for await (const l of exportEvents(engine.store)) out.push(l);
  return out;
});
const target = open("target").store;
await timed("importEvents (verified)", total, () => importEvents(target, lines));
console.log(`${kind}: payments ${summary.payments}, events ${summary.events}, illegal ${summary.illegal.length}, findings ${report.findings.length}, node ${process.version}`);
await engine.close();
await target.close();
