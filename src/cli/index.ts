// The `cardflow` command line: a thin layer over the library. Each group of commands lives in
// its own module and registers itself on the program here.
import { Command } from "commander";
import { registerAccounts } from "./accounts.js";
import { registerAudit } from "./audit.js";
import { registerDiagram } from "./diagram.js";
import { registerEvents } from "./events.js";
import { registerReconcile } from "./reconcile.js";

export function createProgram(): Command {
  const program = new Command("cardflow")
    .description("cardflow: event-sourced payment orchestration core")
    .showHelpAfterError();
  // command groups register here: registerXxx(program)
  registerAccounts(program);
  registerAudit(program);
  registerEvents(program);
  registerDiagram(program);
  registerReconcile(program);
  return program;
}

export async function main(argv = process.argv): Promise<void> {
  await createProgram().parseAsync(argv);
}
