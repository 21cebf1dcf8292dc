// What every check reads: the history grouped into operations and tries, each payment's stream
// folded through the machine (one state after each event), and which events each operation's
// Idempotency-Key caused. Pure.
import type { PaymentEvent } from "../../../machines/events.js";
import { applyPaymentEvent, initialPaymentSnapshot, type PaymentSnapshot } from "../../../machines/fold.js";
import type { RecordedEvent } from "../../../src/store/port.js";
import type { Complete, Entry, FaultKind, Invoke, OpKind } from "../history.js";

export interface Try {
  invoke: Invoke;
  complete?: Complete;
}

export interface Op {
  op: number;
  kind: OpKind;
  key: string | null;
  /** The payment it is about: the one named in the request, or the one a create made. */
  payment_id: string | null;
  tries: Try[];
  /** When its first try was sent. */
  invokedAt: number;
  /** Its first ok answer (the acknowledgement), if any. */
  ok: Complete | null;
}

export interface PaymentHistory {
  payment_id: string;
  /** The stream, by revision. */
  events: RecordedEvent[];
  /** states[p]: the machine after the first p events (states[0]: before the payment existed). Ends where the path breaks. */
  states: PaymentSnapshot[];
  /** Revision of the first event the machine refused, or null. */
  brokenAt: number | null;
}

export interface Model {
  ops: Op[];
  payments: Map<string, PaymentHistory>;
  /** Payment events by the Idempotency-Key in their metadata. */
  byKey: Map<string, RecordedEvent[]>;
  /** Late answers a payment no longer took (LateAnswerUnapplied, beside it), by the abandoned attempt's id. */
  unapplied: Map<string, RecordedEvent>;
  opOfKey: Map<string, Op>;
  /** Windows [start, end] of injected outages, by kind. */
  faults: Array<{ kind: FaultKind; start: number; end: number }>;
  /** When the history ends (its last timestamp). */
  end: number;
  /** Date.now() minus the run's time (its clock entry), null in a history without one. */
  wallOffset: number | null;
}

export const PAYMENT_STREAM = "payment-";
/** Answers that say "not now, try again" rather than answering the request. */
export const TRANSIENT: ReadonlySet<string> = new Set(["store_unavailable", "idempotency_key_in_use", "attempt_in_flight", "concurrent_update"]);
export const keyOf = (e: RecordedEvent) => (e.metadata.idempotency_key as string | null | undefined) ?? null;
export const attemptIdOf = (e: RecordedEvent) => ((e.data ?? {}) as { attempt_id?: string }).attempt_id ?? null;

export function foldPayment(payment_id: string, events: RecordedEvent[]): PaymentHistory {
  const states: PaymentSnapshot[] = [initialPaymentSnapshot as PaymentSnapshot];
  let brokenAt: number | null = null;
  for (const e of events) {
    const next = applyPaymentEvent(states[states.length - 1]!, e as unknown as PaymentEvent);
    if (!next) {
      brokenAt = e.revision;
      break;
    }
    states.push(next);
  }
  return { payment_id, events, states, brokenAt };
}

export function buildModel(history: readonly Entry[], events: readonly RecordedEvent[]): Model {
  const byOp = new Map<number, Op>();
  const open = new Map<FaultKind, number[]>();
  const faults: Model["faults"] = [];
  let end = 0;
  let wallOffset: number | null = null;
  for (const entry of history) {
    end = Math.max(end, entry.t);
    if (entry.type === "clock") {
      wallOffset = entry.wall - entry.t;
      continue;
    }
    if (entry.type === "fault") {
      const starts = open.get(entry.kind) ?? [];
      if (entry.phase === "start") open.set(entry.kind, [...starts, entry.t]);
      else if (starts.length) faults.push({ kind: entry.kind, start: starts.shift()!, end: entry.t });
      continue;
    }
    if (entry.type === "invoke") {
      const op = byOp.get(entry.op) ?? { op: entry.op, kind: entry.kind, key: entry.key, payment_id: entry.payment_id, tries: [], invokedAt: entry.t, ok: null };
      op.tries[entry.try] = { invoke: entry };
      byOp.set(entry.op, op);
      continue;
    }
    const op = byOp.get(entry.op);
    const t = op?.tries[entry.try];
    if (!op || !t) continue;
    t.complete = entry;
    if (entry.outcome === "ok" && !op.ok) op.ok = entry;
    if (op.kind === "create" && entry.record) op.payment_id ??= entry.record.payment_id;
  }
  for (const [kind, starts] of open) for (const start of starts) faults.push({ kind, start, end });

  const streams = new Map<string, RecordedEvent[]>();
  const byKey = new Map<string, RecordedEvent[]>();
  const unapplied = new Map<string, RecordedEvent>();
  for (const e of events) {
    if (e.type === "LateAnswerUnapplied") unapplied.set((e.data as { attempt_id: string }).attempt_id, e);
    if (!e.stream.startsWith(PAYMENT_STREAM)) continue;
    const id = e.stream.slice(PAYMENT_STREAM.length);
    streams.set(id, [...(streams.get(id) ?? []), e]);
    const key = keyOf(e);
    if (key !== null) byKey.set(key, [...(byKey.get(key) ?? []), e]);
  }
  const payments = new Map<string, PaymentHistory>();
  for (const [id, list] of streams) payments.set(id, foldPayment(id, [...list].sort((a, b) => a.revision - b.revision)));

  const ops = [...byOp.values()].sort((a, b) => a.op - b.op);
  const opOfKey = new Map<string, Op>();
  for (const op of ops) {
    if (op.key === null) continue;
    opOfKey.set(op.key, op);
    // a create whose answer never came: its payment is the one its key created
    if (op.kind === "create" && op.payment_id === null) {
      const created = byKey.get(op.key)?.find((e) => e.type === "PaymentIntentCreated");
      if (created) op.payment_id = created.stream.slice(PAYMENT_STREAM.length);
    }
  }
  return { ops, payments, byKey, unapplied, opOfKey, faults, end, wallOffset };
}

/** The events of this operation's key on its payment's stream. */
export const effectsOf = (model: Model, op: Op): RecordedEvent[] =>
  op.key === null ? [] : (model.byKey.get(op.key) ?? []).filter((e) => op.payment_id !== null && e.stream === PAYMENT_STREAM + op.payment_id);

/**
 * The attempt events of a stream closed by AttemptAbandoned (the processor did nothing for them):
 * each one by the next event naming its id. A retry that makes an abandoned call again appends its
 * attempt under the same id (src/engine/outcomes.ts sameCallAgain): that one stands on its own.
 */
export function abandonedAttempts(events: readonly RecordedEvent[]): Set<RecordedEvent> {
  const abandoned = new Set<RecordedEvent>();
  events.forEach((e, i) => {
    const id = attemptIdOf(e);
    if (id === null || !e.type.endsWith("Attempted")) return;
    if (events.slice(i + 1).find((x) => attemptIdOf(x) === id)?.type === "AttemptAbandoned") abandoned.add(e);
  });
  return abandoned;
}

/** When an event was appended, on the run's time (its timestamp is the server's wall clock, ms); null without a clock entry. */
export const timeOf = (model: Model, e: RecordedEvent): number | null =>
  model.wallOffset === null ? null : Date.parse(String(e.metadata.timestamp)) - model.wallOffset;

/**
 * The states of a payment an answer may show (indexes into its states): after the effects of
 * every operation acknowledged before it was sent, before those of any operation sent after it came.
 */
export function windowOf(model: Model, payment_id: string, self: Op, invokedAt: number, completedAt: number): { lower: number; upper: number } {
  const payment = model.payments.get(payment_id);
  let lower = 0;
  let upper = payment ? payment.states.length - 1 : 0;
  for (const op of model.ops) {
    if (op === self || op.payment_id !== payment_id) continue;
    const revisions = effectsOf(model, op).map((e) => e.revision);
    if (revisions.length === 0) continue;
    if (op.ok && op.ok.t < invokedAt) lower = Math.max(lower, Math.max(...revisions) + 1);
    if (op.invokedAt > completedAt) upper = Math.min(upper, Math.min(...revisions));
  }
  return { lower, upper };
}

/**
 * A retry of this op is decided anew (src/engine/outcomes.ts earlierTry): its key's last processor
 * call was abandoned (the processor did nothing) and the key has no other effect that stands.
 */
export function decidedAnew(model: Model, op: Op): boolean {
  const abandoned = abandonedAttempts(model.payments.get(op.payment_id ?? "")?.events ?? []);
  const own = effectsOf(model, op);
  return own.length > 0 && own.every((e) => abandoned.has(e));
}
