// One stream checked on its own: its hash chain and, for a payment, its transitions (each against
// the machine that decided it: ./machine-history.ts) and amount invariants, with its timeline.
import { Decimal } from "../money.js";
import type { RecordedEvent } from "../store/port.js";
import { verifyChain } from "./chain.js";
import type { Finding, TimelineRow } from "./findings.js";
import { auditReplay, type MachineDefinitions } from "./machine-history.js";

const chainFindings = (events: readonly RecordedEvent[]): Finding[] =>
  verifyChain(events).map(({ kind, stream, event_id, revision, message }) => ({ kind, subject: stream, event_id, revision, message }));

export const checkOtherStream = chainFindings;

/** Chain, transitions and amounts of one payment stream. */
export function checkPaymentStream(events: readonly RecordedEvent[], machines?: MachineDefinitions) {
  const findings = chainFindings(events);
  const report = auditReplay(events, machines);
  const timeline: TimelineRow[] = report.steps.map((step, i) => {
    const e = events[i]!;
    const { amount_authorized, amount_captured, amount_refunded } = step.state.context;
    const row: TimelineRow = {
      revision: e.revision,
      position: e.position,
      event_id: e.id,
      type: e.type,
      timestamp: e.metadata.timestamp,
      request_id: e.metadata.request_id,
      actor: e.metadata.actor ?? null,
      terminal_id: step.state.context.terminal?.terminal_id ?? null,
      idempotency_key: e.metadata.idempotency_key ?? null,
      machine_version: step.machine_version,
      status_before: step.status_before,
      status_after: step.state.status,
      allowed: step.allowed,
      allowed_by_machine: step.allowed_by_machine ?? null,
      amounts_after: { authorized: amount_authorized, captured: amount_captured, refunded: amount_refunded },
      ...(typeof e.metadata.late_answer_to === "string" && { late_answer_to: e.metadata.late_answer_to }),
    };
    const at = { subject: e.stream, event_id: e.id, revision: e.revision };
    if (step.refusal) {
      const { kind, guards, message } = step.refusal;
      findings.push({ kind, ...at, ...(kind === "guard_failed" ? { guards } : {}), message: `${e.type} (${e.stream}@${e.revision}) is refused: ${message}` });
    }
    const [authorized, captured, refunded] = [amount_authorized, amount_captured, amount_refunded].map((v) => new Decimal(v));
    if (captured!.greaterThan(authorized!)) findings.push({ kind: "amount_invariant", ...at, message: `after ${e.type} (${e.stream}@${e.revision}) captured ${amount_captured} exceeds authorized ${amount_authorized}` });
    if (refunded!.greaterThan(captured!)) findings.push({ kind: "amount_invariant", ...at, message: `after ${e.type} (${e.stream}@${e.revision}) refunded ${amount_refunded} exceeds captured ${amount_captured}` });
    return row;
  });
  // today's fold (the projections') refuses what only an earlier machine allowed: no fresh read models to compare
  const foldable = timeline.every((r) => r.allowed && r.allowed_by_machine === null);
  return { timeline, final: report.final, findings, foldable };
}
