// The `cardflow` command line: a thin layer over the library. Each group of commands lives in
// its own module and registers itself on the program here.
import { Command } from "commander";
import { registerAudit } from "./audit.js";
import { registerDiagram } from "./diagram.js";
import { registerEvents } from "./events.js";

export function createProgram(): Command {
  const program = new Command("cardflow")
    .description("cardflow: event-sourced payment orchestration core")
    .showHelpAfterError();
  // command groups register here: registerXxx(program)
  registerAudit(program);
  registerEvents(program);
  registerDiagram(program);
  return program;
}

export async function main(argv = process.argv): Promise<void> {
  await createProgram().parseAsync(argv);
}
