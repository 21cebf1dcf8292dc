// `cardflow diagram`: the payment machine's transition diagram, generated from the machine; with
// --payment, the path that payment took highlighted and numbered.
import type { Command } from "commander";
import { Option } from "commander";
import { diagram, type DiagramFormat } from "../audit/diagram.js";
import { NotFound } from "../errors.js";
import { action, processIo, type CliIo } from "./io.js";
import { READS, storeOption, withStore } from "./store-option.js";

export function registerDiagram(program: Command, io: CliIo = processIo): void {
  program
    .command("diagram")
    .summary("the machine's transition diagram (mermaid, dot, svg); a payment's path with --payment")
    .description("the payment machine's transition diagram, generated from the machine definition (states, events, guards, initial and final states)")
    .addOption(new Option("--format <format>", "output format").choices(["mermaid", "dot", "svg"]).default("mermaid"))
    .option("--payment <id>", "highlight and number the path this payment took (reads --store)")
    .addOption(storeOption())
    .action(
      action(io, async (opts: { format: DiagramFormat; payment?: string; store?: string }) => {
        if (opts.payment === undefined) return void io.out(await diagram({ format: opts.format }));
        const paymentId = opts.payment;
        await withStore(io, opts.store, READS, async ({ store }) => {
          const path = await store.readStream(`payment-${paymentId}`);
          if (path.length === 0) throw new NotFound("payment", paymentId, "payment");
          io.out(await diagram({ format: opts.format, path, title: `payment ${paymentId}` }));
        });
      }),
    );
}
