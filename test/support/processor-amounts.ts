// The amounts a processor was asked to move (its ledger: src/processors/ledger.ts) against the
// amounts cardflow recorded for the same calls: each authorization, capture and refund attempt
// the processor acted on must carry the amount the processor was asked for, and so must the
// outcome event answering it. A command that sends the processor another amount than it records
// (a partial capture, a refund) shows up here.
import type { EventStore } from "../../src/store/port.js";
import type { LedgerEntry } from "../../src/processors/ledger.js";

const MOVES_MONEY: Record<string, { call: string; outcomes: string[] }> = {
  AuthorizationAttempted: { call: "authorize", outcomes: [] },
  CaptureAttempted: { call: "capture", outcomes: ["PaymentCaptured", "CaptureRequested"] },
  RefundAttempted: { call: "refund", outcomes: ["PaymentRefunded"] },
};

/** What disagrees between the processor's ledger and one payment's stream (empty: they agree). */
export async function amountMismatches(store: Pick<EventStore, "readStream">, ledger: { get(key: string): LedgerEntry | undefined }, paymentId: string): Promise<string[]> {
  const events = await store.readStream(`payment-${paymentId}`);
  const problems: string[] = [];
  for (const attempt of events) {
    const kind = MOVES_MONEY[attempt.type];
    if (!kind) continue;
    const { attempt_id, amount } = attempt.data as { attempt_id: string; amount: string };
    const entry = ledger.get(attempt_id);
    if (!entry || entry.call === "refused") continue; // the processor did nothing
    if (entry.call !== kind.call) problems.push(`${attempt_id}: ${attempt.type} recorded, the processor was asked to ${entry.call}`);
    if (entry.amount !== amount) problems.push(`${attempt_id}: ${attempt.type} records ${amount}, the processor was asked for ${entry.amount}`);
    for (const outcome of events) {
      const data = outcome.data as { attempt_id?: string; amount?: string };
      if (data.attempt_id !== attempt_id || !kind.outcomes.includes(outcome.type)) continue;
      if (data.amount !== entry.amount) problems.push(`${attempt_id}: ${outcome.type} records ${data.amount}, the processor was asked for ${entry.amount}`);
    }
  }
  return problems;
}

/** Every payment stream of the store checked (amountMismatches), mismatches listed. */
export async function allAmountMismatches(store: Pick<EventStore, "readStream" | "readAll">, ledger: { get(key: string): LedgerEntry | undefined }): Promise<string[]> {
  const payments = new Set((await store.readAll()).filter((e) => e.stream.startsWith("payment-")).map((e) => e.stream.slice("payment-".length)));
  const out: string[] = [];
  for (const id of payments) out.push(...(await amountMismatches(store, ledger, id)));
  return out;
}
