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

/** Calls kept in memory when the ledger has a file: the recent ones (lookups of older ones read the file). */
const RECENT = 10_000;

/**
 * In memory only (no file): every call is kept, for tests and short-lived sandboxes. With a file,
 * the file is the ledger and memory keeps the recent calls, so a long-lived server stays flat; a
 * lookup of an older call (the reconciler's, rare) reads the file, which other processes sharing
 * it may also have written.
 */
export function createLedger(file?: string): Ledger {
  const recent = new Map<string, RecordedOutcome>();
  const remember = (key: string, outcome: RecordedOutcome) => {
    recent.delete(key);
    recent.set(key, outcome);
    if (file && recent.size > RECENT) recent.delete(recent.keys().next().value!);
  };
  const fromFile = (): [string, RecordedOutcome][] =>
    file && existsSync(file)
      ? readFileSync(file, "utf8")
          .split("\n")
          .filter((line) => line !== "")
          .map((line) => {
            const { key, outcome } = JSON.parse(line) as { key: string; outcome: RecordedOutcome };
            return [key, outcome];
          })
      : [];
  for (const [key, outcome] of fromFile().slice(-RECENT)) remember(key, outcome);
  if (file) mkdirSync(dirname(file), { recursive: true });
  return {
    get(key) {
      const known = recent.get(key);
      if (known || !file) return known;
      const found = new Map(fromFile()).get(key);
      if (found) remember(key, found);
      return found;
    },
    set(key, outcome) {
      // synchronous: on disk before the call returns its answer
      if (file) appendFileSync(file, `${JSON.stringify({ key, outcome })}\n`);
      remember(key, outcome);
    },
    entries: () => (file ? [...new Map(fromFile()).entries()] : [...recent.entries()]),
  };
}

/** Where the service keeps the simulated processors' ledger: beside its store, so `cardflow reconcile` reads the same one. */
export const ledgerFileIn = (dataDir: string) => join(dataDir, "simulator-ledger.jsonl");
