// A simulated processor's own record of the calls it answered, by idempotency key: what a real
// processor keeps on its side. It lives apart from cardflow's store (in memory, or in a JSON-lines
// file that survives the cardflow process), so a test can kill cardflow and ask what really
// happened. Written before the answer leaves the processor: an answer lost in a crash is found here.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { RecordedOutcome } from "./port.js";

export interface Ledger {
  get(key: string): RecordedOutcome | undefined;
  set(key: string, recorded: RecordedOutcome): void;
  entries(): [string, RecordedOutcome][];
}

export function createLedger(file?: string): Ledger {
  const recorded = new Map<string, RecordedOutcome>();
  if (file && existsSync(file)) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (!line) continue;
      const { key, outcome } = JSON.parse(line) as { key: string; outcome: RecordedOutcome };
      recorded.set(key, outcome);
    }
  }
  if (file) mkdirSync(dirname(file), { recursive: true });
  return {
    get: (key) => recorded.get(key),
    set(key, outcome) {
      // synchronous: on disk before the call returns its answer
      if (file) appendFileSync(file, `${JSON.stringify({ key, outcome })}\n`);
      recorded.set(key, outcome);
    },
    entries: () => [...recorded.entries()],
  };
}

/** Where the service keeps the simulated processors' ledger: beside its store, so `cardflow reconcile` reads the same one. */
export const ledgerFileIn = (dataDir: string) => join(dataDir, "simulator-ledger.jsonl");
