// Replay for audits: a payment stream folded through the machine purely (replay: the state after
// each event, any event the machine would not have allowed flagged and the state kept, so one bad
// event does not hide what follows; stored events are untrusted here: one that does not match its
// zod schema, an edited amount "abc", is refused, never thrown on), and a whole store in one pass
// (replayStore: each payment stream folded by revision, as replayPayment folds it; payments by final
// status, every event the machine would not have allowed, each against the machine that decided it).
import { performance } from "node:perf_hooks";
import { PaymentEvent } from "../../machines/events.js";
import { applyPaymentEvent, initialPaymentSnapshot, stateOf, type PaymentSnapshot, type PaymentState } from "../../machines/fold.js";
import { NotFound } from "../errors.js";
import { auditReplay, auditStep, type AuditReplay } from "./machine-history.js";
import type { EventStore, RecordedEvent } from "../store/port.js";
import { batchesOf, lastPosition, paymentIdOf, type OnProgress } from "./source.js";

export interface IllegalTransition {
  payment_id: string;
  revision: number;
  position: number;
  event_id: string;
  type: string;
  /** The status the payment was in when the event came. */
  status: string;
  /** Why the machine refused it. */
  refused: string;
  /** illegal_transition: no transition for it in that status; guard_failed: `guards` failed. */
  kind: "illegal_transition" | "guard_failed";
  guards: string[];
}

export interface ReplaySummary {
  payments: number;
  /** Events of every stream read (account and terminal streams included). */
  events: number;
  payment_events: number;
  by_status: Record<string, number>;
  illegal: IllegalTransition[];
  /** Payment events stored at a global position before an earlier revision of their stream (folded by revision all the same). */
  reordered: { payment_id: string; revision: number; position: number; event_id: string; type: string }[];
  duration_ms: number;
}

export interface ReplayStoreOptions {
  onProgress?: OnProgress;
  /** Milliseconds for `duration_ms` (injected; defaults to performance.now). */
  now?: () => number;
}

/** A payment being folded: its snapshot, the revision it expects next, the events read before their turn. */
interface Folding {
  snapshot: PaymentSnapshot;
  next: number;
  lastPosition: number;
  early: Map<number, RecordedEvent>;
}

/**
 * Every payment stream folded by revision, as replayPayment and the audit fold it, in one pass over
 * the store in global order: an event read before its stream's earlier revisions waits for them
 * (memory: only such events), and what still waits at the end (a revision missing) is folded then,
 * in revision order.
 */
export async function replayStore(store: EventStore, { onProgress, now = () => performance.now() }: ReplayStoreOptions = {}): Promise<ReplaySummary> {
  const started = now();
  const total = onProgress ? await lastPosition(store) : 0;
  const payments = new Map<string, Folding>();
  const illegal: IllegalTransition[] = [];
  const reordered: ReplaySummary["reordered"] = [];
  let events = 0;
  let paymentEvents = 0;
  const fold = (paymentId: string, p: Folding, e: RecordedEvent) => {
    if (e.position < p.lastPosition) reordered.push({ payment_id: paymentId, revision: e.revision, position: e.position, event_id: e.id, type: e.type });
    p.lastPosition = Math.max(p.lastPosition, e.position);
    p.next = e.revision + 1;
    // each event against the machine that decided it (./machine-history.ts)
    const step = auditStep(p.snapshot, e);
    if ("next" in step) p.snapshot = step.next;
    else {
      const { kind, guards, message } = step.refusal;
      illegal.push({ payment_id: paymentId, revision: e.revision, position: e.position, event_id: e.id, type: e.type, status: p.snapshot.value, refused: message, kind, guards });
    }
  };
  for await (const batch of batchesOf(store)) {
    for (const e of batch) {
      events++;
      const paymentId = paymentIdOf(e.stream);
      if (paymentId === null) continue;
      paymentEvents++;
      let p = payments.get(paymentId);
      if (!p) payments.set(paymentId, (p = { snapshot: initialPaymentSnapshot, next: 0, lastPosition: 0, early: new Map() }));
      if (e.revision !== p.next) {
        p.early.set(e.revision, e);
        continue;
      }
      fold(paymentId, p, e);
      for (let waiting = p.early.get(p.next); waiting; waiting = p.early.get(p.next)) {
        p.early.delete(waiting.revision);
        fold(paymentId, p, waiting);
      }
    }
    onProgress?.({ phase: "replaying", done: batch[batch.length - 1]!.position, total, unit: "events" });
  }
  // revisions missing before them: the rest in revision order, as a read of the stream gives them
  for (const [paymentId, p] of payments) for (const e of [...p.early.values()].sort((a, b) => a.revision - b.revision)) fold(paymentId, p, e);
  const by_status: Record<string, number> = {};
  for (const { snapshot } of payments.values()) by_status[String(snapshot.value)] = (by_status[String(snapshot.value)] ?? 0) + 1;
  return { payments: payments.size, events, payment_events: paymentEvents, by_status, illegal, reordered, duration_ms: now() - started };
}

/** One payment's stream replayed: the state after each event, each against the machine that decided it. */
export async function replayPayment(store: EventStore, paymentId: string): Promise<AuditReplay & { payment_id: string }> {
  const events = await store.readStream(`payment-${paymentId}`);
  if (events.length === 0) throw new NotFound("payment", paymentId, "payment_id", "in the store");
  return { payment_id: paymentId, ...auditReplay(events) };
}

export interface ReplayStep {
  revision: number;
  position: number;
  type: string;
  status_before: PaymentState["status"];
  /** false: the machine would not have allowed this event here. */
  allowed: boolean;
  /** Why it was refused: not a valid event, or no transition for it in this status. */
  refused?: string;
  state: PaymentState;
}

/** One stored event applied to a snapshot: the next snapshot, or why the event is refused. */
export function replayStep(snapshot: PaymentSnapshot, e: Pick<RecordedEvent, "type" | "version" | "data">): { next: PaymentSnapshot } | { refused: string } {
  const parsed = PaymentEvent.safeParse({ type: e.type, version: e.version, data: e.data });
  if (!parsed.success) return { refused: `not a valid payment event: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}` };
  const next = applyPaymentEvent(snapshot, parsed.data);
  return next ? { next } : { refused: `not allowed in status ${snapshot.value}` };
}

export interface ReplayReport {
  steps: ReplayStep[];
  final: PaymentState;
  illegal: ReplayStep[];
}

export function replay(events: readonly Pick<RecordedEvent, "type" | "version" | "data" | "revision" | "position">[]): ReplayReport {
  let snapshot = initialPaymentSnapshot;
  const steps: ReplayStep[] = [];
  for (const e of events) {
    const before = stateOf(snapshot).status;
    const step = replayStep(snapshot, e);
    if ("next" in step) snapshot = step.next;
    const refused = "refused" in step ? { refused: step.refused } : {};
    steps.push({ revision: e.revision, position: e.position, type: e.type, status_before: before, allowed: "next" in step, ...refused, state: stateOf(snapshot) });
  }
  return { steps, final: stateOf(snapshot), illegal: steps.filter((s) => !s.allowed) };
}
