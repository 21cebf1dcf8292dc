// Replay for audits: fold a stream through the machine purely, reporting the state after each
// event and flagging any event the machine would not have allowed (the fold then keeps the state
// it had, so one bad event does not hide what follows). Stored events are untrusted here: one
// that does not match its zod schema (an edited amount "abc") is refused, never thrown on.
import { PaymentEvent } from "../machines/events.js";
import { applyPaymentEvent, initialPaymentSnapshot, stateOf, type PaymentSnapshot, type PaymentState } from "../machines/fold.js";
import type { RecordedEvent } from "./store/port.js";

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
