// `cardflow events export` and `cardflow events import`: move streams between stores as JSONL,
// losslessly; import refuses (and appends nothing) when a stream's hash chain or transitions fail.
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { Command } from "commander";
import { exportEvents, importEvents } from "../audit/transfer.js";
import { streamHeads } from "../audit/audit.js";
import { action, processIo, show, type CliIo } from "./io.js";
import { READS, storeOption, withStore, WRITES } from "./store-option.js";

export function registerEvents(program: Command, io: CliIo = processIo): void {
  const events = program
    .command("events")
    .summary("`events export`, `events import`, `events heads`: move streams as JSONL, anchor their heads")
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
    .description("append the events of a JSONL export to the store; refuses the whole file, appending nothing, when a stream's hash chain or transitions do not verify or the store already has it with other events")
    .argument("<file>", "a JSONL file written by `cardflow events export` (- for stdin)")
    .addOption(storeOption())
    .action(
      action(io, async (file: string, opts: { store?: string }) =>
        withStore(io, opts.store, WRITES, async ({ store }) => {
          const input = file === "-" ? process.stdin : createReadStream(file, "utf8");
          const result = await importEvents(store, createInterface({ input, crlfDelay: Infinity }));
          io.err(`imported ${result.events} events in ${result.streams} streams\n`);
        }),
      ),
    );
}
