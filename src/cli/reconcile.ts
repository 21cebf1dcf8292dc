// `cardflow reconcile [--dry-run] [--json] [--grace <ms>] [--store <store>]`: one reconciler pass on
// the service's store (--store, else DATABASE_URL, else DATA_DIR, named on stderr; a missing one is
// refused), asking the service's processors (the sandbox: the simulators' ledger beside
// the store; production: PROCESSORS_MODULE's adapters, as `npm start` runs them) what became of
// every attempt left without outcome. The server runs the same pass at start-up
// and on an interval; with both running, the store's expected revision lets one append.
import { Option, type Command } from "commander";
import { configFromEnv } from "../config.js";
import { createEngine, type ReconcileReport } from "../engine.js";
import { serviceProcessors } from "../processors/adapters.js";
import { systemClock } from "../clock.js";
import { randomIds } from "../ids.js";
import { action, processIo, show, type CliIo } from "./io.js";
import { READS, storeOption, withStore } from "./store-option.js";

function text(report: ReconcileReport): string {
  const lines = report.resolved.map((r) => `  ${r.payment_id}: ${r.open} ${r.attempt_id ?? ""} — processor: ${r.processor}${r.late ? " (after the call was abandoned as never received: its late answer)" : ""} → ${r.appended.join(" + ") || "closed meanwhile"}${r.unapplied ? " (the payment no longer takes it: recorded for an operator, see cardflow audit)" : ""}`);
  const verb = report.dry_run ? "would append" : "resolved";
  return `found ${report.found} open attempt(s) past the grace period; ${verb} ${report.resolved.length} in ${report.duration_ms} ms; ${report.waiting} younger still open\n${lines.map((l) => `${l}\n`).join("")}`;
}

export function registerReconcile(program: Command, io: CliIo = processIo): void {
  program
    .command("reconcile")
    .summary("resolve processor calls a crash left without outcome")
    .description("asks the processor what became of every attempt without outcome older than the grace period, and appends it (or AttemptAbandoned when the call never arrived); refuses a store that does not exist, and says on stderr which store it opened")
    .option("--dry-run", "show what would be appended, append nothing")
    .option("--json", "print the report as JSON")
    .option("--grace <ms>", "only attempts at least this old", "30000")
    .addOption(storeOption())
    .addOption(new Option("--data-dir <dir>", "the service's data directory: its store unless --store or DATABASE_URL says another, and the sandbox processor's ledger (default: DATA_DIR, else data/ in the repository, as npm start)").env("DATA_DIR"))
    .action(
      action(io, async (opts: { dryRun?: boolean; json?: boolean; grace: string; store?: string; dataDir?: string }) => {
        const config = configFromEnv({ ...process.env, ...(opts.dataDir ? { DATA_DIR: opts.dataDir } : {}) });
        const clock = systemClock;
        const ids = randomIds();
        // the store first: a store that is not there is refused before any processor is set up
        return withStore(
          io,
          opts.store,
          READS,
          async ({ store, readModels }) => {
            const { processors, close } = await serviceProcessors(config, { clock, ids });
            const engine = createEngine({ store, readModels, processors, clock, ids, syncAuthTimeoutMs: config.syncAuthTimeoutMs });
            try {
              const report = await engine.reconcile({ dryRun: opts.dryRun ?? false, graceMs: Number(opts.grace) });
              return show(io, opts.json, report, text, 0);
            } finally {
              await engine.projections.stop(); // the store itself is closed by withStore
              await close();
            }
          },
          config,
        );
      }),
    );
}
