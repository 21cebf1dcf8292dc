// `cardflow settle-late-answer <payment_id> <attempt_id> --note <text>`: an operator's record that a
// late answer a payment no longer took (LateAnswerUnapplied) was settled with the processor.
// `cardflow reconcile [--dry-run] [--json] [--grace <ms>] [--store <store>]`: one reconciler pass on
// the service's store (--store, else DATABASE_URL, else DATA_DIR, named on stderr; a missing one is
// refused), asking the service's processors (the sandbox: the simulators' ledger beside
// the store; production: PROCESSORS_MODULE's adapters, as `npm start` runs them) what became of
// every attempt left without outcome. The server runs the same pass at start-up
// and on an interval; with both running, the store's expected revision lets one append. In the
// sandbox, a production process counting itself on the store during the pass ends it (exit 2).
import { Option, type Command } from "commander";
import { basename, dirname, resolve } from "node:path";
import { pino } from "pino";
import { configFromEnv } from "../config.js";
import { parseDuration } from "../api-keys.js";
import { createEngine, type ReconcileReport } from "../engine.js";
import { checkProcessorSettings, serviceProcessors } from "../processors/adapters.js";
import { systemClock } from "../clock.js";
import { createLateAnswers } from "../engine/streams/late-answers.js";
import { InvalidRequest } from "../errors.js";
import { randomIds } from "../ids.js";
import { action, EXIT_ERROR, processIo, show, type CliIo } from "./io.js";
import { READS, storeIds, storeOption, withStore } from "./store-option.js";

function text(report: ReconcileReport): string {
  const lines = report.resolved.map((r) => `  ${r.payment_id}: ${r.open} ${r.attempt_id ?? ""} — processor: ${r.processor}${r.late ? " (after the call was abandoned as never received: its late answer)" : ""} → ${r.appended.join(" + ") || "closed meanwhile"}${r.unapplied ? " (the payment no longer takes it: recorded for an operator, see cardflow audit)" : ""}`);
  const failed = report.failed.map((f) => `  ${f.payment_id}: ${f.open} ${f.attempt_id ?? ""} — not resolved: ${f.error}`);
  const verb = report.dry_run ? "would append" : "resolved";
  return (
    `found ${report.found} open attempt(s) past the grace period; ${verb} ${report.resolved.length} in ${report.duration_ms} ms; ${report.waiting} younger still open` +
    (failed.length ? `; ${failed.length} could not be resolved (left open: run again)` : "") +
    `\n${[...lines, ...failed].map((l) => `${l}\n`).join("")}`
  );
}

export function registerReconcile(program: Command, io: CliIo = processIo): void {
  program
    .command("reconcile")
    .summary("resolve processor calls a crash left without outcome")
    .description("asks the processor what became of every attempt without outcome older than the grace period, and appends it (or AttemptAbandoned when the call never arrived); refuses a store that does not exist, and says on stderr which store it opened")
    .option("--dry-run", "show what would be appended, append nothing")
    .option("--json", "print the report as JSON")
    .option("--grace <ms>", "only attempts at least this old: milliseconds, or a duration as accounts rotate takes it (30s, 5m) (default: RECONCILE_GRACE_MS, as the service's reconciler, else 30000)")
    .addOption(storeOption({ readOnly: false }))
    .addOption(new Option("--data-dir <dir>", "the service's data directory: its store unless --store or DATABASE_URL says another, and the sandbox processor's ledger (default: DATA_DIR, else ./data, or data/ in a checkout, as the service)").env("DATA_DIR"))
    .action(
      action(io, async (opts: { dryRun?: boolean; json?: boolean; grace?: string; store?: string; dataDir?: string }, command: Command) => {
        const graceMs = opts.grace === undefined ? undefined : graceOf(opts.grace);
        if (opts.store?.startsWith("jsonl:")) throw new InvalidRequest("--store: an export is read-only; reconcile appends to the service's store (sqlite:PATH, postgres:URL, kurrentdb:URL)", "store");
        // the data directory as serve takes it (its sandbox ledger is there): --data-dir; else a
        // store file named cardflow.sqlite's folder; else DATA_DIR; else a sqlite:PATH store's folder
        const given = opts.dataDir !== undefined && command.getOptionValueSource("dataDir") !== "env" ? opts.dataDir : undefined;
        const storeFile = opts.store?.startsWith("sqlite:") ? resolve(opts.store.slice("sqlite:".length)) : undefined;
        const byStore = storeFile !== undefined && (basename(storeFile) === "cardflow.sqlite" || opts.dataDir === undefined);
        const dataDir = given ?? (byStore ? dirname(storeFile) : opts.dataDir);
        // named as given in a refusal
        const dataDirFrom = given !== undefined ? "--data-dir" : byStore ? "--store" : opts.dataDir !== undefined ? "DATA_DIR" : "the default data directory";
        const config = configFromEnv({ ...process.env, ...(dataDir ? { DATA_DIR: dataDir, CARDFLOW_DATA_DIR_FROM: dataDirFrom } : {}) });

        const clock = systemClock;
        // the store first: a store that is not there is refused before any processor is set up
        return withStore(
          io,
          opts.store,
          READS,
          async ({ store, readModels }) => {
            // request ids from the store's counter, as the server's reconciler takes them (a dry run appends nothing: none)
            const ids = opts.dryRun ? randomIds() : await storeIds(store);
            // the adapters' log (processor failures) on stderr: stdout is the report
            const logger = pino({ level: config.logLevel }, pino.destination(2));
            // the sandbox processor's ledger says what the simulated processor did: one made up here
            // (empty, another folder's) would answer "never received" for calls it made, and a retry would charge again
            // in the sandbox, a production process counting itself on this store during the pass ends it at once
            const onProduction = (refusal: Error) => {
              io.err(`cardflow: ${refusal.message}\n`);
              process.exit(EXIT_ERROR);
            };
            // what a server's start refuses before its store (the service checks it there: ../serve/before-stores.ts)
            await checkProcessorSettings(config);
            const { processors, watch, close } = await serviceProcessors(config, { clock, ids, store, logger, ledgerMustExist: dataDirFrom, onProduction, counted: !opts.dryRun });
            const engine = createEngine({ store, ...(readModels ? { readModels } : {}), processors, clock, ids, syncAuthTimeoutMs: config.syncAuthTimeoutMs });
            try {
              await watch?.check();
              // the service's grace unless --grace says otherwise: a call still on its way is not taken for one never received
              const report = await engine.reconcile({ dryRun: opts.dryRun ?? false, graceMs: graceMs ?? config.reconcileGraceMs });
              // exit 1 when a call could not be resolved (the others were)
              return show(io, opts.json, report, text, report.failed.length);
            } finally {
              await engine.projections.stop(); // the store itself is closed by withStore
              await close();
            }
          },
          config,
        );
      }),
    );

  program
    .command("settle-late-answer")
    .summary("record that a late answer a payment no longer took was settled with the processor")
    .description(
      "records LateAnswerSettled beside the payment, once (settling it again changes nothing), after an operator settled a late answer the payment no longer took (an audit's late_answer_unapplied finding) with the processor; `cardflow audit` no longer reports it. Exits 2 when there is no such payment, or the payment has no such late answer for the attempt",
    )
    .argument("<payment_id>", "the payment the finding names")
    .argument("<attempt_id>", "the attempt the finding names")
    .requiredOption("--note <text>", "what was done with the processor (kept in the event)")
    .addOption(storeOption({ readOnly: false }))
    .action(
      action(io, async (payment_id: string, attempt_id: string, opts: { note: string; store?: string }) =>
        withStore(io, opts.store, READS, async ({ store }) => {
          await createLateAnswers({ store, clock: systemClock, ids: await storeIds(store) }).settle({ payment_id, attempt_id, note: opts.note }, { actor: "cli" });
          io.out(`settled: the late answer to ${attempt_id} of payment ${payment_id}\n`);
        }),
      ),
    );
}

/** --grace: bare milliseconds, as RECONCILE_GRACE_MS, or a duration with its unit, as accounts rotate --grace takes it. */
function graceOf(text: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  if (/^\d+(\.\d+)?(ms|s|m|h|d)$/.test(text)) return parseDuration(text, "--grace");
  throw new InvalidRequest(`--grace: expected milliseconds, a whole number from 0, or a duration (30s, 5m), got ${JSON.stringify(text)}`, "grace");
}
