// The audit commands run in process, as `cardflow ...args` would run them: what they wrote and
// the exit code they set.
import { Command } from "commander";
import { registerAudit } from "../../src/cli/audit.js";
import { registerDiagram } from "../../src/cli/diagram.js";
import { registerEvents } from "../../src/cli/events.js";

export async function cardflowOn({ interactive }: { interactive: boolean }, ...args: string[]) {
  let out = "";
  let err = "";
  const io = { out: (t: string) => void (out += t), err: (t: string) => void (err += t), interactive };
  const program = new Command("cardflow").exitOverride();
  registerAudit(program, io);
  registerEvents(program, io);
  registerDiagram(program, io);
  process.exitCode = undefined;
  await program.parseAsync(args, { from: "user" });
  const code = process.exitCode ?? 0;
  process.exitCode = undefined;
  return { out, err, code };
}

export const cardflow = (...args: string[]) => cardflowOn({ interactive: false }, ...args);
