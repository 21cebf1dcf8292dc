// The history checker: a pure function of the run's history, the final event streams and the
// sandbox processor's ledger. Each check is a module named by its letter in issue 29:
// (a) effects, (b) paths (./effects.ts); (c) linearizability; (d) retries; (e) money; (f) statuses.
import type { RecordedEvent } from "../../../src/store/port.js";
import type { Entry } from "../history.js";
import type { Anomaly } from "./anomaly.js";
import { checkEffects, checkPaths } from "./effects.js";
import { checkLinearizability } from "./linearizability.js";
import { buildModel, type Model } from "./model.js";
import { checkAmounts, checkLedger, type LedgerEntry } from "./money.js";
import { checkRetries } from "./retries.js";
import { checkStatuses } from "./statuses.js";

export type { Anomaly } from "./anomaly.js";
export type { LedgerEntry } from "./money.js";

export interface CheckInput {
  history: readonly Entry[];
  /** Every stored event (payment streams are checked; others are ignored). */
  events: readonly RecordedEvent[];
  /** The sandbox processor's ledger: [idempotency key, recorded call]. */
  ledger: ReadonlyArray<readonly [string, LedgerEntry]>;
}

export interface Verdict {
  anomalies: Anomaly[];
  model: Model;
}

export function check({ history, events, ledger }: CheckInput): Verdict {
  const model = buildModel(history, events);
  const anomalies = [
    ...checkEffects(model),
    ...checkPaths(model),
    ...checkLinearizability(model),
    ...checkRetries(model),
    ...checkAmounts(model),
    ...checkLedger(model, ledger),
    ...checkStatuses(model),
  ];
  return { anomalies, model };
}
