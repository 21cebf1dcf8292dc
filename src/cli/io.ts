// Where commands write: the process's streams, or a test's buffers.
import { Command } from "commander";
import type { OnProgress } from "../audit/source.js";
import { StoreOpenFailed } from "../store/port/unavailable.js";
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** stderr is a terminal: progress may be drawn there. */
  interactive: boolean;
}

export const processIo: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  interactive: Boolean(process.stderr.isTTY),
};

/** Exit codes: 1 = the command found problems (findings, illegal transitions); 2 = it could not run. */
export const EXIT_FINDINGS = 1;
export const EXIT_ERROR = 2;

/** A count with its noun: "1 event", "2 events". */
export const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

/** Runs a command action; a failure prints its message (no stack) and sets exit code 2. */
export function action<A extends unknown[]>(io: CliIo, run: (...args: A) => Promise<number | void>) {
  return async (...args: A) => {
    try {
      const code = await run(...args);
      if (code) process.exitCode = code;
    } catch (error) {
      // a store that could not be opened is said as every command says its store, then why
      if (error instanceof StoreOpenFailed) io.err(`cardflow: store: ${error.store}\n`);
      const command = args.find((arg): arg is Command => arg instanceof Command);
      io.err(`cardflow: ${asGiven(error instanceof Error ? error.message : String(error), command)}\n`);
      process.exitCode = EXIT_ERROR;
    }
  };
}

/**
 * A message about an option ("--store: …") names the variable instead when the value came from it
 * (CARDFLOW_STORE, DATA_DIR): the option was never typed.
 */
function asGiven(message: string, command: Command | undefined): string {
  const flag = /^(--[a-z-]+):/.exec(message)?.[1];
  const option = flag && command?.options.find((o) => o.long === flag);
  if (!option || !option.envVar || command!.getOptionValueSource(option.attributeName()) !== "env") return message;
  return `${option.envVar}${message.slice(flag.length)}`;
}

/** Prints a result as JSON or text; returns the exit code: 1 when it has problems. */
export function show<T>(io: CliIo, asJson: boolean | undefined, value: T, text: (value: T) => string, problems: number): number {
  io.out(asJson ? JSON.stringify(value, null, 2) + "\n" : text(value));
  return problems ? EXIT_FINDINGS : 0;
}

/**
 * Runs a long read with a progress line on stderr (only on a terminal): the phase, a bar and a
 * percentage of its total, how many of how many, and the rate; redrawn as each phase of the run
 * moves (reading, verifying, comparing), so no phase looks frozen.
 */
export async function withProgress<T>(io: CliIo, label: string, enabled: boolean, run: (onProgress?: OnProgress) => Promise<T>): Promise<T> {
  if (!enabled || !io.interactive) return run();
  let phase: { name: string; started: number } | undefined;
  let drawn = false;
  try {
    return await run(({ phase: name, done, total, unit }) => {
      if (phase?.name !== name) phase = { name, started: Date.now() };
      const seconds = Math.max((Date.now() - phase.started) / 1000, 0.001);
      const ratio = total > 0 ? Math.min(done / total, 1) : 1;
      const width = 24;
      const filled = Math.round(ratio * width);
      const bar = "█".repeat(filled) + "░".repeat(width - filled);
      const count = (n: number) => n.toLocaleString("en");
      io.err(`\r\x1b[2K${label}: ${name} ${bar} ${Math.floor(ratio * 100)}% · ${count(done)} of ${count(total)} ${unit} · ${count(Math.round(done / seconds))} ${unit}/s`);
      drawn = true;
    });
  } finally {
    if (drawn) io.err("\r\x1b[2K");
  }
}

/** Why a file named on the command line could not be read, in words (not EISDIR's). */
export function unreadableFile(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === "EISDIR") return "is a directory, not a file";
  if (code === "ENOENT") return "does not exist";
  if (code === "EACCES" || code === "EPERM") return "cannot be read (permission denied)";
  return `cannot be read (${(error as Error).message})`;
}
