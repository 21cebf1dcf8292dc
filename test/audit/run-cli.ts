// The CLI run in process, as `cardflow ...args` would run it (the same program, exit codes
// included): what it wrote to stdout and stderr, and the exit code.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
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

/** `node ...args` as a process of its own: its exit code and output (a failing exit is an answer, not a throw). */
export async function nodeProcess(args: string[], env: NodeJS.ProcessEnv = process.env) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, args, { env });
    return { code: 0, out: stdout, err: stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout, err: e.stderr };
  }
}
