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

/** A progress line on stderr, redrawn in place; only on a terminal. */
export function progressLine(io: CliIo, label: string) {
  const started = Date.now();
  let drawn = false;
  return {
    update({ events, streams }: { events: number; streams: number }) {
      if (!io.interactive) return;
      const seconds = Math.max((Date.now() - started) / 1000, 0.001);
      const width = 24;
      const filled = Math.floor(Date.now() / 120) % width;
      const bar = "░".repeat(filled) + "█" + "░".repeat(width - filled - 1);
      io.err(`\r${label} ${bar} ${events.toLocaleString("en")} events · ${streams.toLocaleString("en")} streams · ${Math.round(events / seconds).toLocaleString("en")} events/s`);
      drawn = true;
    },
    done() {
      if (drawn) io.err("\r\x1b[2K");
    },
  };
}
