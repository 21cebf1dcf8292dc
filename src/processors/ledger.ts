// A simulated processor's own record of the calls it answered, by idempotency key: what a real
// processor keeps on its side (./processor-side.ts: in memory, or in the file the served processes
// share, which survives the cardflow process), so a test can kill cardflow and ask what really
// happened. Written before the answer leaves the processor: an answer lost in a crash is found here.
import { memorySide, type ProcessorSide } from "./processor-side.js";
import type { RecordedOutcome } from "./port.js";

export interface Ledger {
  get(key: string): RecordedOutcome | undefined;
  set(key: string, recorded: RecordedOutcome): void;
  entries(): [string, RecordedOutcome][];
}

export function createLedger(side: ProcessorSide = memorySide()): Ledger {
  return {
    get: (key) => side.get<RecordedOutcome>("ledger", key),
    set: (key, recorded) => side.set("ledger", key, recorded),
    entries: () => side.entries<RecordedOutcome>("ledger"),
  };
}
