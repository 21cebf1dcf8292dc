// At most one effect per idempotency key (the attempt id the engine recorded): a call runs once and
// its answer is recorded in the simulators' ledger; a repeated key gets the recorded answer (a
// refusal is refused again), the way a real processor's idempotency works.
import { setBounded } from "../../bounded.js";
import type { Clock } from "../../clock.js";
import { CardflowError, ProcessorRefused } from "../../errors.js";
import type { Ledger, LedgerEntry } from "../ledger.js";
import type { ProcessorSide } from "../processor-side.js";
import type { RecordedOutcome } from "../port.js";
import { injectedFault, NO_FAULT } from "../sandbox-faults.js";

/** Calls in flight are remembered for the last this many keys: a long-running process stays bounded in memory. */
const REMEMBERED = 10_000;

export type Once = <T>(key: string, run: () => Promise<LedgerEntry>, answer: (recorded: RecordedOutcome) => T, latencyMs?: number) => Promise<T>;

export function createOnce({ ledger, side, clock, scripted, processorLatencyMs }: { ledger: Ledger; side: ProcessorSide; clock: Clock; scripted: boolean; processorLatencyMs: number }): Once {
  const memo = new Map<string, Promise<unknown>>();
  return function once<T>(key: string, run: () => Promise<LedgerEntry>, answer: (recorded: RecordedOutcome) => T, latencyMs = processorLatencyMs): Promise<T> {
    const known = ledger.get(key);
    if (known) return Promise.resolve().then(() => answer(replayRefusal(known)));
    let p = memo.get(key) as Promise<LedgerEntry> | undefined;
    if (!p) {
      const fault = scripted ? injectedFault(side, key) : NO_FAULT; // sandbox: a test's injected outage
      // a call under the same key recorded while this one was on its way (another process's retry of
      // it): the recorded answer, no second effect (a real processor dedups when it acts, not when
      // asked). Looked up again only after a wait: at once, the ledger is as `known` read it.
      const act = (waited: boolean) => fault.around(() => {
        const landed = waited ? ledger.get(key) : undefined;
        if (landed) return Promise.resolve().then(() => replayRefusal(landed));
        return run().then(
          (recorded) => (ledger.set(key, recorded), recorded),
          (error: unknown) => {
            if (error instanceof CardflowError) ledger.set(key, { call: "refused", code: error.code, message: error.message });
            throw error;
          },
        );
      });
      const wait = latencyMs + fault.latencyMs;
      const call = (p = wait > 0 ? new Promise<void>((r) => clock.setTimer(wait, r)).then(() => act(true)) : act(false));
      setBounded(memo, key, call, REMEMBERED);
      // calls in flight only: a settled one is in the ledger, or failed unrecorded (it never reached
      // the processor) and may be made again under its key
      const settled = () => void (memo.get(key) === call && memo.delete(key));
      call.then(settled, settled);
    }
    return p.then(answer);
  };
}

function replayRefusal(recorded: RecordedOutcome): RecordedOutcome {
  if (recorded.call === "refused") throw new ProcessorRefused(recorded.message, recorded.code);
  return recorded;
}

/** The answer a call of this kind gave (a key reused for another kind of call is a caller's bug). */
export function as<C extends RecordedOutcome["call"]>(call: C) {
  return (recorded: RecordedOutcome) => {
    if (recorded.call !== call) throw new Error(`idempotency key reused: recorded ${recorded.call}, asked ${call}`);
    return recorded as Extract<RecordedOutcome, { call: C }>;
  };
}
