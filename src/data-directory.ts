// The data directory every process of a service shares (DATA_DIR), and the refusal of a setting
// that cannot mean what it says (ConfigurationError): here, apart from ./config.ts, so the
// simulators' file (./processors/processor-side.ts) makes its directory without importing the
// stores ./config.ts opens.
import { mkdirSync } from "node:fs";

/** A setting refused at start (one line, exit 1) or by a command (exit 2). */
export class ConfigurationError extends Error {
  override readonly name = "ConfigurationError";
}

/**
 * Makes the data directory (private: 0700) if it is not there; one that cannot be made (a file in
 * the way, no permission) is refused naming the setting, not as a bare EEXIST from mkdir.
 */
export function makeDataDirectory(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    const why = code === "EEXIST" || code === "ENOTDIR" ? "a file is in the way: give a directory" : `it cannot be made (${code || (error as Error).message})`;
    throw new ConfigurationError(`the data directory (DATA_DIR, --data-dir) ${dataDir}: ${why}`, { cause: error });
  }
}
