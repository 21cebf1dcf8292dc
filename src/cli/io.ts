// Where commands write: the process's streams, or a test's buffers.
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

/** Runs a command action; a failure prints its message (no stack) and sets exit code 2. */
export function action<A extends unknown[]>(io: CliIo, run: (...args: A) => Promise<number | void>) {
  return async (...args: A) => {
    try {
      const code = await run(...args);
      if (code) process.exitCode = code;
    } catch (error) {
      io.err(`cardflow: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = EXIT_ERROR;
    }
  };
}

/** Prints a result as JSON or text; returns the exit code: 1 when it has problems. */
export function show<T>(io: CliIo, asJson: boolean | undefined, value: T, text: (value: T) => string, problems: number): number {
  io.out(asJson ? JSON.stringify(value, null, 2) + "\n" : text(value));
  return problems ? EXIT_FINDINGS : 0;
}

type Progress = (progress: { events: number; streams: number }) => void;

/**
 * Runs a long read with a progress line on stderr (only on a terminal): events and streams done
 * and the rate. The store port has no count, so the line shows progress, not a percentage.
 */
export async function withProgress<T>(io: CliIo, label: string, enabled: boolean, run: (onProgress?: Progress) => Promise<T>): Promise<T> {
  if (!enabled || !io.interactive) return run();
  const started = Date.now();
  let drawn = false;
  try {
    return await run(({ events, streams }) => {
      const seconds = Math.max((Date.now() - started) / 1000, 0.001);
      const width = 24;
      const at = Math.floor(Date.now() / 120) % width;
      const bar = "░".repeat(at) + "█" + "░".repeat(width - at - 1);
      io.err(`\r${label} ${bar} ${events.toLocaleString("en")} events · ${streams.toLocaleString("en")} streams · ${Math.round(events / seconds).toLocaleString("en")} events/s`);
      drawn = true;
    });
  } finally {
    if (drawn) io.err("\r\x1b[2K");
  }
}
