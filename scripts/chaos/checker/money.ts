// (e) Money. Per payment, summed from its events (independently of the machine): captured ≤
// authorized and refunded ≤ captured after every event. After the reconciler, the sandbox
// processor's ledger (its record of every call, by idempotency key = attempt id) equals cardflow's:
// every call the processor acted on has its attempt and the same outcome in the store (no charge
// without its record; one a payment no longer took, recorded beside it for an operator, is an
// anomaly of its own kind), every outcome in the store has its call in the ledger (no record without
// its charge), no attempt is left open, and amounts agree where the ledger records them.
import type { RecordedEvent } from "../../../src/store/port.js";
import { Decimal } from "../../../src/money.js";
import { anomaly, type Anomaly } from "./anomaly.js";
import { attemptIdOf, type Model } from "./model.js";

/** A ledger entry as the simulators record it (src/processors/port.ts RecordedOutcome), amounts when recorded. */
export type LedgerEntry = { call: string; outcome?: { kind: string; authorization?: { amount_authorized: string } } | null; refund_id?: string; payment_method_id?: string; code?: string; amount?: string };

const ATTEMPTS = new Set(["AuthorizationAttempted", "TerminalAuthorizationAttempted", "CaptureAttempted", "VoidAttempted", "RefundAttempted", "CardSaveAttempted"]);
const AUTHORIZATION_EVENT: Record<string, string> = { authorized: "PaymentAuthorized", captured: "PaymentCaptured", capture_requested: "CaptureRequested", failed: "AuthorizationFailed" };
const AUTHORIZATION_OUTCOMES = new Set(Object.values(AUTHORIZATION_EVENT));

type Data = { amount?: string; amount_authorized?: string; authorization?: { amount_authorized: string } | null; refund_id?: string; payment_method_id?: string; reason?: string };
const data = (e: RecordedEvent) => (e.data ?? {}) as Data;

export function checkAmounts(model: Model): Anomaly[] {
  const found: Anomaly[] = [];
  for (const p of model.payments.values()) {
    let authorized = new Decimal(0);
    let captured = new Decimal(0);
    let refunded = new Decimal(0);
    for (const e of p.events) {
      const d = data(e);
      const authorization = e.type === "PaymentAuthorized" ? d.amount_authorized : d.authorization?.amount_authorized;
      if (authorization) authorized = new Decimal(authorization);
      if (e.type === "PaymentCaptured") captured = captured.plus(d.amount!);
      if (e.type === "PaymentRefunded") refunded = refunded.plus(d.amount!);
      if (captured.greaterThan(authorized)) found.push(anomaly("e", "over_capture", p.payment_id, null, `captured ${captured} > authorized ${authorized} after ${e.type}@${e.revision}`));
      if (refunded.greaterThan(captured)) found.push(anomaly("e", "over_refund", p.payment_id, null, `refunded ${refunded} > captured ${captured} after ${e.type}@${e.revision}`));
    }
  }
  return found;
}

interface Attempt {
  payment_id: string;
  attempt: RecordedEvent;
  /** Events naming this attempt after it (its outcome, or AttemptAbandoned). */
  closed: RecordedEvent[];
  /** Events after it on the stream (a terminal's later report). */
  after: RecordedEvent[];
}

export function checkLedger(model: Model, ledger: ReadonlyArray<readonly [string, LedgerEntry]>): Anomaly[] {
  const found: Anomaly[] = [];
  const attempts = new Map<string, Attempt>();
  for (const p of model.payments.values()) {
    p.events.forEach((e, i) => {
      const id = attemptIdOf(e);
      if (ATTEMPTS.has(e.type) && id) attempts.set(id, { payment_id: p.payment_id, attempt: e, closed: [], after: p.events.slice(i + 1) });
      else if (id) attempts.get(id)?.closed.push(e);
      // the processor's late answer to a call abandoned as never received: its outcome after all
      else if (typeof e.metadata.late_answer_to === "string") attempts.get(e.metadata.late_answer_to)?.closed.push({ ...e, data: { ...(e.data as object), attempt_id: e.metadata.late_answer_to } });
    });
  }
  const recorded = new Map(ledger.map(([k, v]) => [k, v] as const));
  for (const [id, a] of attempts) {
    const say = (kind: string, message: string) => found.push(anomaly("e", kind, a.payment_id, null, `attempt ${id} (${a.attempt.type}@${a.attempt.revision}): ${message}`));
    const entry = recorded.get(id);
    const outcome = a.closed.find((e) => e.type !== "AttemptAbandoned");
    const abandoned = a.closed.find((e) => e.type === "AttemptAbandoned");
    if (!outcome && !abandoned) {
      say("open_attempt", `still without outcome after the reconciler${entry ? ` (the processor recorded ${entry.call})` : ""}`);
      continue;
    }
    if (abandoned && !outcome) {
      const acted = entry && entry.call !== "refused" ? `the processor recorded ${entry.call}${entry.outcome ? ` ${entry.outcome.kind}` : ""}` : null;
      const left = model.unapplied.get(id);
      // recorded, but beside the payment: a late answer it no longer took, left to an operator
      if (acted && left) say("late_answer_unapplied", `${acted} after cardflow abandoned it; the payment no longer took it (${left.stream}@${left.revision}: for an operator)`);
      else if (acted) say("charge_without_record", `${acted}, cardflow abandoned it (${data(abandoned).reason})`);
      continue;
    }
    if (!entry || entry.call === "refused") {
      say("record_without_charge", `cardflow recorded ${outcome!.type}, the processor ${entry ? "refused the call" : "has no such call"}`);
      continue;
    }
    const asked = data(a.attempt).amount;
    const mismatch = entry.amount !== undefined && asked !== undefined && !new Decimal(entry.amount).equals(asked) ? `amount: the processor was asked ${entry.amount}, the attempt says ${asked}` : compare(entry, outcome!, a);
    if (mismatch) say("ledger_mismatch", mismatch);
  }
  for (const [id, entry] of recorded) {
    if (!attempts.has(id)) found.push(anomaly("e", "charge_without_record", null, null, `the processor recorded ${entry.call} for ${id}, which no attempt in the store names`));
  }
  return found;
}

/** What differs between the processor's record of a call and the outcome cardflow stored, or null. */
function compare(entry: LedgerEntry, outcome: RecordedEvent, a: Attempt): string | null {
  const d = data(outcome);
  const want = (type: string) => (outcome.type === type ? null : `the processor recorded ${entry.call} ${entry.outcome?.kind ?? ""}, cardflow ${outcome.type}`);
  const amount = (stored: string | undefined) => (entry.amount !== undefined && stored !== undefined && !new Decimal(entry.amount).equals(stored) ? `amount: processor ${entry.amount}, cardflow ${stored}` : null);
  switch (entry.call) {
    case "authorize":
      return want(AUTHORIZATION_EVENT[entry.outcome!.kind]!);
    case "start_terminal": {
      const started = want("TerminalAuthorizationStarted");
      if (started || !entry.outcome) return started;
      // the terminal's outcome, reported later without attempt id
      const report = a.after.find((e) => attemptIdOf(e) === null && AUTHORIZATION_OUTCOMES.has(e.type));
      return report && report.type !== AUTHORIZATION_EVENT[entry.outcome.kind] ? `the terminal recorded ${entry.outcome.kind}, cardflow ${report.type}@${report.revision}` : null;
    }
    case "capture":
      return want(entry.outcome!.kind === "captured" ? "PaymentCaptured" : "CaptureRequested") ?? amount(d.amount);
    case "void":
      return want("PaymentCanceled");
    case "refund":
      return want("PaymentRefunded") ?? (d.refund_id !== entry.refund_id ? `refund id: processor ${entry.refund_id}, cardflow ${d.refund_id}` : amount(d.amount));
    case "save_card":
      return want("CardSaved") ?? (d.payment_method_id !== entry.payment_method_id ? `card: processor ${entry.payment_method_id}, cardflow ${d.payment_method_id}` : null);
    default:
      return `unknown processor call ${entry.call}`;
  }
}

