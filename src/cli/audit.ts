// `cardflow replay`, `cardflow audit` and `cardflow as-of`: the auditors' commands, a thin layer
// over src/audit (every result is also available as JSON with --json).
import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { z } from "zod";
import { asOf } from "../audit/as-of.js";
import { audit, auditAll, type Anchors } from "../audit/audit.js";
import { formatAudit, formatReplay, formatReplaySummary, formatStoreAudit } from "../audit/format.js";
import { catchUpReadModels } from "../audit/read-models.js";
import { replayPayment, replayStore } from "../audit/replay.js";
import { InvalidRequest } from "../errors.js";
import { feedAudit } from "../webhooks/feed-audit.js";
import { action, processIo, show, unreadableFile, withProgress, type CliIo } from "./io.js";
import { READS, storeOption, withStore, type OpenedStore } from "./store-option.js";

/** Read models are brought up to date first (what the service does when read), unless told not to. */
async function caughtUp(opened: OpenedStore, catchUp: boolean) {
  if (catchUp) await catchUpReadModels(opened, feedAudit);
  return { store: opened.store, readModels: opened.readModels };
}

async function readAnchors(path: string): Promise<Anchors> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    throw new InvalidRequest(`--anchors: ${path} ${error instanceof SyntaxError ? "is not JSON" : unreadableFile(error)} (save anchors with: cardflow events heads > heads.json)`, "anchors");
  }
  const parsed = z.record(z.string(), z.string()).safeParse(json);
  if (!parsed.success) throw new InvalidRequest(`--anchors: ${path} is not a JSON object of stream -> head hash`, "anchors");
  // an audit against no heads checks nothing: refused, lest it read as a clean pass
  if (Object.keys(parsed.data).length === 0) throw new InvalidRequest(`--anchors: ${path} holds no heads, so it anchors nothing (save anchors with: cardflow events heads > heads.json)`, "anchors");
  // a head is a SHA-256 in hex, as `cardflow events heads` writes it: anything else is no anchor (a file of something else)
  const wrong = Object.entries(parsed.data).find(([, head]) => !/^[0-9a-f]{64}$/.test(head));
  if (wrong) throw new InvalidRequest(`--anchors: ${path}: the head of ${wrong[0]} is not a SHA-256 in hex (64 of 0-9a-f), got ${JSON.stringify(wrong[1].slice(0, 80))} (save anchors with: cardflow events heads > heads.json)`, "anchors");
  return parsed.data;
}

export function registerAudit(program: Command, io: CliIo = processIo): void {
  program
    .command("replay")
    .summary("replay event streams through the machine (one payment, or a summary of the store)")
    .description("fold event streams through the payment machine, purely: the state after each event of one payment, or a summary of the whole store (payments by status, events, illegal transitions, time taken); exits 1 when an event is one the machine refuses")
    .addOption(storeOption())
    .option("--payment <id>", "replay one payment and print the state after each event")
    .option("--json", "machine-readable output")
    .option("--no-progress", "no progress line on stderr")
    .action(
      action(io, async (opts: { store?: string; payment?: string; json?: boolean; progress: boolean }) =>
        withStore(io, opts.store, READS, async ({ store }) => {
          if (opts.payment !== undefined) {
            const report = await replayPayment(store, opts.payment);
            return show(io, opts.json, report, formatReplay, report.illegal.length);
          }
          const summary = await withProgress(io, "replay", opts.progress, (onProgress) => replayStore(store, { onProgress }));
          return show(io, opts.json, summary, formatReplaySummary, summary.illegal.length);
        }),
      ),
    );

  program
    .command("audit")
    .summary("timeline and verification of a payment, or of every stream with --all")
    .description("explain and verify a payment: its timeline (time, request id, actor, status before → after, amounts after), the state recomputed from its events against the stored read models, its hash chain; with --all, every stream of the store. Exits 1 on any finding")
    .argument("[payment_id]", "the payment to audit")
    .addOption(storeOption())
    .option("--all", "verify every stream: legal transitions, amount invariants, hash chains, read models equal to a fresh replay")
    .option("--json", "machine-readable output")
    .option("--anchors <file>", "a JSON file of head hashes saved earlier (`cardflow events heads`); a stream (with a payment_id, the payment's) that no longer holds its anchored head, or is no longer in the store, is a finding; the summary says how many heads were checked")
    .option("--no-catch-up", "do not bring the stored read models up to date before comparing them")
    .option("--no-progress", "no progress line on stderr")
    .action(
      action(io, async (paymentId: string | undefined, opts: { store?: string; all?: boolean; anchors?: string; json?: boolean; catchUp: boolean; progress: boolean }) => {
        if (Boolean(opts.all) === (paymentId !== undefined)) throw new InvalidRequest("give either a payment_id or --all", "payment_id");
        return withStore(io, opts.store, READS, async (opened) => {
          // read before the read models are caught up: a refused file leaves them as they were
          const anchors = opts.anchors === undefined ? undefined : await readAnchors(opts.anchors);
          const source = await caughtUp(opened, opts.catchUp);
          if (paymentId !== undefined) {
            const report = await audit(source, paymentId, { anchors });
            return show(io, opts.json, report, formatAudit, report.findings.length);
          }
          const report = await withProgress(io, "audit", opts.progress, (onProgress) => auditAll(source, { onProgress, anchors, feed: feedAudit }));
          return show(io, opts.json, report, formatStoreAudit, report.findings.length);
        });
      }),
    );

  program
    .command("as-of")
    .summary("the payment record as it stood at a moment")
    .description("the payment record (spec §2.1) as it stood at a moment: its events up to that time, folded")
    .argument("<payment_id>", "the payment")
    .argument("<timestamp>", "ISO 8601 with its offset (Z or ±hh:mm), e.g. 2026-01-01T00:05:00Z")
    .addOption(storeOption())
    .action(
      action(io, async (paymentId: string, timestamp: string, opts: { store?: string }) =>
        withStore(io, opts.store, READS, async ({ store }) => {
          const found = await asOf(store, paymentId, timestamp);
          // as the as-of route answers: no record then (null), which is an answer, not a failure
          if (!found) io.err(`cardflow: payment ${paymentId} did not exist yet at ${timestamp}\n`);
          show(io, true, found?.record ?? null, String, 0);
        }),
      ),
    );
}
