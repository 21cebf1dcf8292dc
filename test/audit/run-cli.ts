// The CLI run in process, as `cardflow ...args` would run it (the same program, exit codes
// included): what it wrote to stdout and stderr, and the exit code.
import type { OpenService } from "../../src/cli/accounts.js";
import { runCli } from "../../src/cli/index.js";

export async function cardflowOn({ interactive, openService }: { interactive: boolean; openService?: OpenService }, ...args: string[]) {
  let out = "";
  let err = "";
  const io = { out: (t: string) => void (out += t), err: (t: string) => void (err += t), interactive };
  const code = await runCli(args, io, openService);
  process.exitCode = undefined;
  return { out, err, code };
}

export const cardflow = (...args: string[]) => cardflowOn({ interactive: false }, ...args);

/** stderr without the line that names the store (every command writes it first). */
export const withoutStoreLine = (err: string) => err.replace(/^cardflow: store: .*\n/, "");
