// `cardflow events export` and `cardflow events import`: move streams between stores as JSONL,
// losslessly; import refuses (and appends nothing) when a stream's hash chain or transitions fail.
import { createReadStream, statSync } from "node:fs";
import { createInterface } from "node:readline";
import type { Command } from "commander";
import { exportEvents, importEvents } from "../audit/transfer.js";
import { streamHeads } from "../audit/audit.js";
import { action, counted, processIo, show, unreadableFile, type CliIo } from "./io.js";
import { READS, storeOption, withStore, WRITES } from "./store-option.js";
import { InvalidRequest, NotFound } from "../errors.js";
import { streams } from "../../machines/events.js";
import { createMemoryReadModels } from "../store/memory/index.js";
import { coalesced } from "../coalesced.js";
import { stopWithParent } from "../serve/parent.js";
import { createEventFeed, type FeedEntry, type FeedScope } from "../webhooks/feed.js";

export function registerEvents(program: Command, io: CliIo = processIo): void {
  const events = program
    .command("events")
    .summary("`events export`, `events import`, `events heads`: move streams as JSONL, anchor their heads; `events tail`: follow the public event feed")
    .description("move event streams between stores as JSONL (one event per line, lossless)");

  events
    .command("export")
    .summary("write events as JSONL to stdout")
    .description("write every event of the store (or one payment's stream) to stdout as JSONL, in global order")
    .addOption(storeOption())
    .option("--payment <id>", "only this payment's stream")
    .action(
      action(io, async (opts: { store?: string; payment?: string }) =>
        withStore(io, opts.store, READS, async ({ store }) => {
          for await (const line of exportEvents(store, { paymentId: opts.payment })) io.out(line + "\n");
        }),
      ),
    );

  events
    .command("heads")
    .summary("print every stream's head hash as JSON, to keep outside the store")
    .description("print every stream's head hash (the hash of its last event) as JSON; kept somewhere the store's writers cannot reach, it makes a truncated or rewritten stream detectable: `cardflow audit --all --anchors FILE`")
    .addOption(storeOption())
    .action(action(io, async (opts: { store?: string }) => withStore(io, opts.store, READS, async ({ store }) => show(io, true, await streamHeads(store), String, 0))));

  events
    .command("import")
    .summary("append a JSONL export to the store, verified first")
    .description("append the events of a JSONL export to the store; refuses the whole file, appending nothing, when a stream's hash chain or transitions do not verify, the store already has it with other events, or an event id is another stream's; of a stream the store holds in part, appends the events past the store's")
    .argument("<file>", "a JSONL file written by `cardflow events export` (- for stdin)")
    .addOption(storeOption({ readOnly: false }))
    .action(
      action(io, async (file: string, opts: { store?: string }) => {
        // the file first: one that cannot be read touches no store (a new one would be made, then removed)
        if (file !== "-") readable(file);
        const named = file === "-" ? "the standard input" : file;
        return withStore(io, opts.store, WRITES, async ({ store }) => {
          const input = file === "-" ? process.stdin : createReadStream(file, "utf8");
          const result = await importEvents(store, createInterface({ input, crlfDelay: Infinity }));
          // nothing to import is a mistake (the wrong file, an export that failed), not a store to leave made
          if (result.events === 0) throw new InvalidRequest(`${named} holds no events: nothing imported`, "file");
          const already = result.already ? ` (${counted(result.already, "event")} of the file ${result.already === 1 ? "was" : "were"} in the store already)` : "";
          io.err(`imported ${counted(result.events - result.already, "event")} in ${counted(result.streams, "stream")}${already}\n`);
        });
      }),
    );

  events
    .command("tail")
    .summary("print the public events (what webhooks deliver), oldest first, then follow new ones")
    .description("print the public events of the feed (GET /v2/events), oldest first, then each new one as it is appended, until interrupted")
    .option("--account <id>", "only this merchant account's events")
    .option("--after <cursor>", "start after this global position of the event log (the operator's view: positions, not the API's per-account cursors)", "0")
    .option("--no-follow", "print the events there are and exit")
    .option("--json", "one event per line as JSON (the webhook body)")
    .addOption(storeOption())
    .action(
      action(io, async (opts: { store?: string; account?: string; after: string; follow: boolean; json?: boolean }) =>
        withStore(io, opts.store, READS, async ({ store, readModels, export: fromExport }) => {
          if (!/^\d+$/.test(opts.after)) throw new Error("--after: a cursor is a non-negative integer");
          // a read-only or events-only store gets its feed folded in memory
          const feed = createEventFeed({ store, readModels: readModels ?? createMemoryReadModels() });
          // an account the store does not hold would print nothing, and follow for ever
          if (opts.account !== undefined && (await store.readStream(streams.account(opts.account), { maxCount: 1 })).length === 0) throw new NotFound("merchant account", opts.account, "account");
          const scope: FeedScope = opts.account === undefined ? "all" : { account: opts.account };
          // the text line ends with the event's position: --after takes it, to go on from there
          const line = ({ event: e, position }: FeedEntry) =>
            opts.json ? JSON.stringify(e) : `${e.created}  ${e.external_account_id}  ${e.type.padEnd(40)}  ${e.payment_id ?? "-"}  #${e.sequence}  ${e.id}  @${position}`;
          const resume = () => io.err(`cardflow: printed up to position ${cursor}; go on from there with --after ${cursor}\n`);
          let cursor = Number(opts.after);
          const printNew = async () => {
            await feed.catchUp();
            for (;;) {
              const batch = await feed.entries(scope, cursor, 500);
              for (const entry of batch) io.out(line(entry) + "\n");
              if (batch.length > 0) cursor = batch[batch.length - 1]!.position;
              if (batch.length < 500) return;
            }
          };
          // a position past the log's end (a typo, a store restored from before it) would print
          // nothing, and skip unseen every event appended up to it
          const end = await feed.catchUp();
          if (cursor > end) throw new InvalidRequest(`--after: position ${cursor} is past the end of the event log (its last position is ${end}); pass 0 for the beginning, or a position this command printed`, "after");
          await printNew();
          if (opts.follow && fromExport) io.err("cardflow: an export gets no new events: not followed\n");
          if (!opts.follow || fromExport) return resume();
          const head = await feed.catchUp();
          // follow: the store signals appends (other processes' too, by polling); one print at a time
          await new Promise<void>((resolve) => {
            const printing = coalesced(() => printNew().catch((error: unknown) => io.err(`cardflow: ${String(error)}\n`)));
            const subscription = store.subscribeToAll({ after: head }, () => void printing());
            // the store polls on unref'd timers: keep the process alive until interrupted
            const alive = setInterval(() => undefined, 1 << 30);
            const stop = () => void subscription.close().then(printing.settled).then(() => (clearInterval(alive), resume(), resolve()));
            process.once("SIGINT", stop);
            process.once("SIGTERM", stop);
            // under npx a kill reaches npm, not this follower: it stops once npm is gone (as serve does)
            stopWithParent();
          });
        }),
      ),
    );
}

/** An import file that is there and not a directory (a pipe, <(...), is read), else refused naming it (before any store is opened). */
function readable(file: string): void {
  try {
    if (statSync(file).isDirectory()) throw Object.assign(new Error("EISDIR"), { code: "EISDIR" });
  } catch (error) {
    throw new InvalidRequest(`${file} ${unreadableFile(error)}`, "file");
  }
}
