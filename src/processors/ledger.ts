// A simulated processor's own record of the calls it answered, by idempotency key: what a real
// processor keeps on its side (./processor-side.ts: in memory, or in the file the served processes
// share, which survives the cardflow process), so a test can kill cardflow and ask what really
// happened. Written before the answer leaves the processor: an answer lost in a crash is found here.
// Each entry also keeps the amount the call asked the processor to move (an authorization, a
// capture, a refund): tests compare it with the amounts cardflow recorded, so a command that sends
// the processor another amount than its events say is caught.
import { memorySide, type ProcessorSide } from "./processor-side.js";
import type { RecordedOutcome } from "./port.js";

/** What the processor recorded for a call, and the amount it was asked for (calls that move money). */
export type LedgerEntry = RecordedOutcome & { amount?: string };

export interface Ledger {
  get(key: string): LedgerEntry | undefined;
  set(key: string, recorded: LedgerEntry): void;
  entries(): [string, LedgerEntry][];
}

export function createLedger(side: ProcessorSide = memorySide()): Ledger {
  return {
    get: (key) => side.get<LedgerEntry>("ledger", key),
    set: (key, recorded) => side.set("ledger", key, recorded),
    entries: () => side.entries<LedgerEntry>("ledger"),
  };
}
