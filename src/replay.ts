// Replay for audits: fold a stream through the machine purely, reporting the state after each
// event and flagging any event the machine would not have allowed (the fold then keeps the state
// it had, so one bad event does not hide what follows).
import type { PaymentEvent } from "../machines/events.js";
import { applyPaymentEvent, initialPaymentSnapshot, stateOf, type PaymentState } from "../machines/fold.js";
import type { RecordedEvent } from "./store/port.js";

export interface ReplayStep {
  revision: number;
  position: number;
  type: string;
  status_before: PaymentState["status"];
  /** false: the machine would not have allowed this event here. */
  allowed: boolean;
  state: PaymentState;
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
    const next = applyPaymentEvent(snapshot, { type: e.type, version: e.version, data: e.data } as PaymentEvent);
    if (next) snapshot = next;
    steps.push({ revision: e.revision, position: e.position, type: e.type, status_before: before, allowed: next !== null, state: stateOf(snapshot) });
  }
  return { steps, final: stateOf(snapshot), illegal: steps.filter((s) => !s.allowed) };
}
