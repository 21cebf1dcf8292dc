// Replay of a whole store: every payment stream folded through the machine, purely, in one pass
// in global order. The summary counts payments by final status and lists every event the machine
// would not have allowed (the fold keeps the state it had, as src/replay.ts does).
import { performance } from "node:perf_hooks";
import { initialPaymentSnapshot, type PaymentSnapshot } from "../../machines/fold.js";
import { NotFound } from "../errors.js";
import { auditReplay, auditStep, type AuditReplay } from "./machine-history.js";
import type { EventStore } from "../store/port.js";
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
  duration_ms: number;
}

export interface ReplayStoreOptions {
  onProgress?: OnProgress;
  /** Milliseconds for `duration_ms` (injected; defaults to performance.now). */
  now?: () => number;
}

export async function replayStore(store: EventStore, { onProgress, now = () => performance.now() }: ReplayStoreOptions = {}): Promise<ReplaySummary> {
  const started = now();
  const total = onProgress ? await lastPosition(store) : 0;
  const snapshots = new Map<string, PaymentSnapshot>();
  const illegal: IllegalTransition[] = [];
  let events = 0;
  let paymentEvents = 0;
  for await (const batch of batchesOf(store)) {
    for (const e of batch) {
      events++;
      const paymentId = paymentIdOf(e.stream);
      if (paymentId === null) continue;
      paymentEvents++;
      const before = snapshots.get(paymentId) ?? initialPaymentSnapshot;
      // each event against the machine that decided it (./machine-history.ts)
      const step = auditStep(before, e);
      if ("next" in step) snapshots.set(paymentId, step.next);
      else {
        snapshots.set(paymentId, before);
        const { kind, guards, message } = step.refusal;
        illegal.push({ payment_id: paymentId, revision: e.revision, position: e.position, event_id: e.id, type: e.type, status: before.value, refused: message, kind, guards });
      }
    }
    onProgress?.({ phase: "replaying", done: batch[batch.length - 1]!.position, total, unit: "events" });
  }
  const by_status: Record<string, number> = {};
  for (const s of snapshots.values()) by_status[String(s.value)] = (by_status[String(s.value)] ?? 0) + 1;
  return { payments: snapshots.size, events, payment_events: paymentEvents, by_status, illegal, duration_ms: now() - started };
}

/** One payment's stream replayed: the state after each event, each against the machine that decided it. */
export async function replayPayment(store: EventStore, paymentId: string): Promise<AuditReplay & { payment_id: string }> {
  const events = await store.readStream(`payment-${paymentId}`);
  if (events.length === 0) throw new NotFound("payment", paymentId, "payment_id");
  return { payment_id: paymentId, ...auditReplay(events) };
}
