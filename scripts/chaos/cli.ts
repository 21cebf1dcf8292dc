// `npm run chaos -- [--store sqlite|postgres] [--seconds N] [--seed S] [--json]`: a chaos run and
// its verdict (README: "Chaos runs"). Exit 0 when the checker found no anomaly and
// every server stopped cleanly, 1 otherwise, 2 on a usage error (as the cardflow CLI); the history
// is written to .tmp/chaos/ (--history).
import { Command, Option } from "commander";
import { SEEDED_DEFECTS, type SeededDefect } from "../../src/seeded-defects.js";
import { runChaos } from "./run.js";
import { paymentHistory, table } from "./summary.js";

const program = new Command("chaos")
  .description("random operations of concurrent clients against real server processes while faults are injected; checks the history")
  .addOption(new Option("--store <kind>", "the store the servers share").choices(["sqlite", "postgres"]).default("sqlite"))
  .option("--seconds <n>", "how long the workers run", "60")
  .option("--seed <n>", "the seed of the plan (operations, amounts, faults); default: a random one, printed")
  .option("--workers <n>", "client workers", "8")
  .option("--payments <n>", "payments worked on at a time", "6")
  .option("--database-url <url>", "PostgreSQL to use (a fresh schema); default: an embedded one (only that one can be stopped and started)")
  .addOption(new Option("--defect <name>", "a negative control: run the servers with a seeded defect").choices(Object.keys(SEEDED_DEFECTS)))
  .option("--history <file>", "where to write the history (JSONL)")
  .option("--json", "print the summary (and anomalies) as JSON")
  // commander exits 1 on a usage error, the code of a run that found anomalies: 2 instead
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
  .parse();

const opts = program.opts<{ store: "sqlite" | "postgres"; seconds: string; seed?: string; workers: string; payments: string; databaseUrl?: string; defect?: SeededDefect; history?: string; json?: boolean }>();
/** A whole number from `min`, or a usage error (exit 2, as for an unknown option). */
function whole(name: string, raw: string, min: number): number {
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isInteger(value) || value < min) {
    process.stderr.write(`chaos: --${name}: expected a whole number from ${min}, got ${JSON.stringify(raw)}\n`);
    process.exit(2);
  }
  return value;
}
const seconds = whole("seconds", opts.seconds, 1);
const workers = whole("workers", opts.workers, 1);
const pool = whole("payments", opts.payments, 1);
const seed = opts.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : whole("seed", opts.seed, 0);
const result = await runChaos({
  store: opts.store,
  seconds,
  seed,
  workers,
  pool,
  ...(opts.databaseUrl ? { databaseUrl: opts.databaseUrl } : {}),
  ...(opts.defect ? { defect: opts.defect } : {}),
  ...(opts.history ? { historyFile: opts.history } : {}),
  log: opts.json ? undefined : (line) => process.stderr.write(`chaos: ${line}\n`),
});
const failing = result.anomalies.find((a) => a.payment_id !== null)?.payment_id ?? null;
if (opts.json) {
  process.stdout.write(`${JSON.stringify({ ...result.summary, history_file: result.historyFile, anomaly_list: result.anomalies, unclean: result.unclean.map((u) => ({ server: u.server, code: u.code, crashed: u.crashed, output: u.output.slice(-2_000) })) }, null, 2)}\n`);
} else {
  process.stdout.write(`${table(result.summary)}\nhistory: ${result.historyFile}\n`);
  for (const u of result.unclean) process.stdout.write(`server ${u.server} ${u.crashed ? "crashed" : "did not stop cleanly on SIGTERM"} (exit ${u.code}):\n${u.output.slice(-4_000)}\n`);
  if (failing) process.stdout.write(`\n${paymentHistory(failing, result.history, result.events, result.ledger, result.anomalies)}\n`);
  else for (const a of result.anomalies.slice(0, 20)) process.stdout.write(`anomaly ${a.check}:${a.kind}: ${a.message}\n`);
}
process.exit(result.anomalies.length === 0 && result.unclean.length === 0 ? 0 : 1);
