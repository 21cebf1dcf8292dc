// `cardflow reconcile [--dry-run] [--json] [--grace <ms>]`: one reconciler pass on the service's
// store (DATA_DIR), asking the service's processors (the sandbox: the simulators' ledger beside
// the store; production: PROCESSORS_MODULE's adapters, as `npm start` runs them) what became of
// every attempt left without outcome. The server runs the same pass at start-up
// and on an interval; with both running, the store's expected revision lets one append.
import { Option, type Command } from "commander";
import { configFromEnv, openStores } from "../config.js";
import { createEngine, type ReconcileReport } from "../engine.js";
import { serviceProcessors } from "../processors/adapters.js";
import { systemClock } from "../clock.js";
import { randomIds } from "../ids.js";
import { action, processIo, show, type CliIo } from "./io.js";

function text(report: ReconcileReport): string {
  const lines = report.resolved.map((r) => `  ${r.payment_id}: ${r.open} ${r.attempt_id ?? ""} — processor: ${r.processor} → ${r.appended.join(" + ") || "closed meanwhile"}`);
  const verb = report.dry_run ? "would append" : "resolved";
  return `found ${report.found} open attempt(s) past the grace period; ${verb} ${report.resolved.length} in ${report.duration_ms} ms; ${report.waiting} younger still open\n${lines.map((l) => `${l}\n`).join("")}`;
}

export function registerReconcile(program: Command, io: CliIo = processIo): void {
  program
    .command("reconcile")
    .summary("resolve processor calls a crash left without outcome")
    .description("asks the processor what became of every attempt without outcome older than the grace period, and appends it (or AttemptAbandoned when the call never arrived)")
    .option("--dry-run", "show what would be appended, append nothing")
    .option("--json", "print the report as JSON")
    .option("--grace <ms>", "only attempts at least this old", "30000")
    .addOption(new Option("--data-dir <dir>", "the service's data directory").env("DATA_DIR").default("./data"))
    .action(
      action(io, async (opts: { dryRun?: boolean; json?: boolean; grace: string; dataDir: string }) => {
        const config = configFromEnv({ ...process.env, DATA_DIR: opts.dataDir });
        const clock = systemClock;
        const ids = randomIds();
        const { processors, close } = await serviceProcessors(config, { clock, ids });
        const { store, readModels } = await openStores(config);
        const engine = createEngine({ store, readModels, processors, clock, ids, syncAuthTimeoutMs: config.syncAuthTimeoutMs });
        try {
          const report = await engine.reconcile({ dryRun: opts.dryRun ?? false, graceMs: Number(opts.grace) });
          return show(io, opts.json, report, text, 0);
        } finally {
          await engine.close();
          await close();
        }
      }),
    );
}
