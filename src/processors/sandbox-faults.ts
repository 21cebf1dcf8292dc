// Sandbox only: a processor outage injected by a test. The chaos run (scripts/chaos) writes it on
// the processor's side (the faults table, key "calls"), which every served process shares: each
// call then answers latency_ms later, and a share `rate` of the calls (chosen by their idempotency
// key) is lost, the request before the processor acts or the answer after (its ledger has it). A
// lost call rejects with a plain Error, as a timeout would: the outcome is unknown to cardflow.
import type { ProcessorSide } from "./processor-side.js";

export interface ProcessorFault {
  latency_ms?: number;
  lose?: "request" | "answer";
  rate?: number;
}

export interface InjectedFault {
  latencyMs: number;
  /** Runs the call (which records it in the ledger) as the fault has it: lost before, lost after, or as is. */
  around<T>(call: () => Promise<T>): Promise<T>;
}

export const NO_FAULT: InjectedFault = { latencyMs: 0, around: (call) => call() };

/** A key's place in [0, 1): which calls a rate loses, the same for every process. */
const share = (key: string) => ([...key].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % 1000) / 1000;

export function injectedFault(side: ProcessorSide, key: string): InjectedFault {
  const fault = side.get<ProcessorFault>("faults", "calls");
  if (!fault) return NO_FAULT;
  const lost = fault.lose && share(key) < (fault.rate ?? 1) ? fault.lose : undefined;
  const timeout = (what: string) => new Error(`processor timeout: ${what} (sandbox fault)`);
  return {
    latencyMs: fault.latency_ms ?? 0,
    around: (call) =>
      lost === "request"
        ? Promise.reject(timeout(`call ${key} lost before it arrived`))
        : call().then((answer) => {
            if (lost === "answer") throw timeout(`the answer to ${key} was lost`);
            return answer;
          }),
  };
}
