// The `cardflow` command line: a thin layer over the library. Each group of commands lives in
// its own module and registers itself on the program here. Exit codes (README): 0 done/clean,
// 1 findings, 2 the command could not run, usage errors included (unknown command or option, a
// missing argument, a bad choice).
import { Command, CommanderError, type Option } from "commander";
import { registerAccounts, type OpenService } from "./accounts.js";
import { registerAudit } from "./audit.js";
import { registerDiagram } from "./diagram.js";
import { registerEvents } from "./events.js";
import { registerMachine } from "./machine.js";
import { packageVersion } from "../package-root.js";
import { EXIT_ERROR, processIo, type CliIo } from "./io.js";
import { registerReconcile } from "./reconcile.js";
import { registerServe } from "./serve.js";

/** The options that name a store (their names as commander keeps them), and what an empty one is told. */
const STORE_OPTIONS = [
  ["store", "is empty: it names no store (sqlite:PATH, postgres:URL, …)"],
  ["dataDir", "needs a directory"],
  ["databaseUrl", "needs a postgres:// URL"],
] as const;
const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The arguments a program was run with (runCli), for what commander does not keep: an option given twice. */
const argsOf = new WeakMap<Command, readonly string[]>();

/** The first of the command's options given more than once on the command line (its long name), if any; its values are skipped, and so is all after `--`. */
function givenTwice(args: readonly string[], command: Command): string | undefined {
  const seen = new Set<Option>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") return undefined;
    const [flag, inline] = arg.startsWith("--") ? (arg.split(/=(.*)/s) as [string, string?]) : [arg, undefined];
    const option = command.options.find((o) => o.long === flag || o.short === flag);
    if (!option) continue;
    if (seen.has(option)) return option.long ?? option.short;
    seen.add(option);
    if ((option.required || option.optional) && inline === undefined) i++; // its value, whatever it looks like
  }
  return undefined;
}

export function createProgram(io: CliIo = processIo, openService?: OpenService): Command {
  const program = new Command("cardflow")
    .description("cardflow: event-sourced payment orchestration core")
    .version(packageVersion, "-V, --version", "print the version")
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    // a usage error names the problem and points at --help: the whole help would bury the error
    .showHelpAfterError("(add --help for usage)")
    // usage errors are thrown (exitCode below) instead of exiting the process with 1
    .exitOverride()
    // an empty store option on the command line (`--store "$UNSET"`) names no store: refused, not
    // taken as no option (the default store, audited or served in its place); an empty variable
    // (CARDFLOW_STORE=) counts as unset, as every setting's does
    .hook("preAction", (program, command) => {
      const twice = givenTwice(argsOf.get(program) ?? [], command);
      if (twice) {
        io.err(`cardflow: ${twice} is given twice: give it once (the last one would have been taken silently)\n`);
        throw new CommanderError(EXIT_ERROR, "cardflow.optionTwice", `${twice} given twice`);
      }
      for (const [name, needs] of STORE_OPTIONS) {
        const value: unknown = command.getOptionValue(name);
        if (typeof value !== "string" || value.trim() !== "") continue;
        if (command.getOptionValueSource(name) === "env") command.setOptionValueWithSource(name, undefined, "default");
        else {
          io.err(`cardflow: --${kebab(name)}: ${needs}\n`);
          throw new CommanderError(EXIT_ERROR, "cardflow.emptyStoreOption", `--${kebab(name)} is empty`);
        }
      }
    });
  // command groups register here: registerXxx(program); subcommands inherit the settings above
  registerAccounts(program, io, openService);
  registerAudit(program, io);
  registerEvents(program, io);
  registerDiagram(program, io);
  registerMachine(program, io);
  registerReconcile(program, io);
  registerServe(program, io);
  return program;
}

/** Runs `cardflow ...args` and returns its exit code (also left in process.exitCode). */
export async function runCli(args: readonly string[], io: CliIo = processIo, openService?: OpenService): Promise<number> {
  process.exitCode = undefined;
  try {
    const program = createProgram(io, openService);
    argsOf.set(program, args);
    await program.parseAsync(args, { from: "user" });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // --help and --version end with 0; every usage error with 2, as documented
    process.exitCode = error.exitCode === 0 ? 0 : EXIT_ERROR;
  }
  return Number(process.exitCode ?? 0);
}

export async function main(argv = process.argv): Promise<void> {
  // the reader went away (`| head`): what it wanted was printed; end quietly, not with a stack trace
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
      process.exit(process.exitCode ?? 0);
    });
  }
  await runCli(argv.slice(2));
}
