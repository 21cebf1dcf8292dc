// One stream checked on its own: its hash chain and, for a payment, its transitions (each against
// the machine that decided it: ./machine-history.ts) and amount invariants, with its timeline.
import type { UnappliedData } from "../../machines/events.js";
import type { PaymentContext } from "../../machines/payment.js";
import { unappliedAnswer, unsettled } from "../engine/streams/late-answers.js";
import { amounts, Decimal, formatAmount } from "../money.js";
import type { RecordedEvent } from "../store/port.js";
import { verifyChain } from "./chain.js";
import { eventDetail } from "./event-detail.js";
import type { Finding, TimelineRow } from "./findings.js";
import type { AsAllowed } from "../../machines/fold.js";
import { auditReplay, type MachineDefinitions } from "./machine-history.js";
import { invalidEvents } from "./stream-events.js";

const chainFindings = (events: readonly RecordedEvent[]): Finding[] => {
  const broken = verifyChain(events).map(({ kind, stream, event_id, revision, message }): Finding => ({ kind, subject: stream, event_id, revision, message }));
  if (broken.length) return broken;
  // the chain and the revisions agree: the store's global order must too (read models fold in it)
  return events
    .filter((e, i) => i > 0 && e.position < events[i - 1]!.position)
    .map((e) => ({ kind: "reordered", subject: e.stream, event_id: e.id, revision: e.revision, message: `${e.type} ${e.id} (${e.stream}@${e.revision}) is stored at position ${e.position}, before the stream's earlier revisions: the store's order is not the stream's` }));
};

/** Each late answer a payment did not take and no operator settled yet: money moved at the processor that the payment's stream does not show. */
const unappliedFindings = (events: readonly RecordedEvent[]): Finding[] =>
  unsettled(events)
    .map((e) => {
      const { payment_id, attempt_id, answer, reason } = e.data as UnappliedData;
      const did = answer.map((a) => `${a.type} ${JSON.stringify(a.data)}`).join(", ");
      return { kind: "late_answer_unapplied", subject: e.stream, event_id: e.id, revision: e.revision, message: `${unappliedAnswer({ payment_id, attempt_id, reason })} (${did}), and the payment does not take it (${reason}): settle it with the processor, then record it (cardflow settle-late-answer ${payment_id} ${attempt_id} --note …)` };
    });

/** Chain of a stream other than a payment's, and what it holds for an operator. */
export const checkOtherStream = (events: readonly RecordedEvent[]): Finding[] => [...chainFindings(events), ...invalidEvents(events), ...unappliedFindings(events)];

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
      // an attempt on a terminal names it before the terminal has the payment (its start)
      terminal_id: step.state.context.terminal?.terminal_id ?? (e.data as { terminal_id?: string }).terminal_id ?? null,
      idempotency_key: e.metadata.idempotency_key ?? null,
      machine_version: step.machine_version,
      status_before: step.status_before,
      status_after: step.state.status,
      allowed: step.allowed,
      allowed_by_machine: step.allowed_by_machine ?? null,
      // captured as the payment record shows it: a capture the processor settles later counts at once (README)
      amounts_after: { authorized: amount_authorized, captured: recordedCapture(step.state.context), refunded: amount_refunded },
      detail: eventDetail(e),
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
  // a stream with an event no machine allowed has no fresh read models to compare; one only an
  // earlier machine allowed has: today's fold with that event folded as that machine folded it
  const foldable = timeline.every((r) => r.allowed);
  const asAllowed: AsAllowed = new Map(report.steps.flatMap((step, i) => (step.allowed_by_machine ? [[events[i]!.position, step.state] as const] : [])));
  return { timeline, final: report.final, findings, foldable, asAllowed };
}

/** Captured in the payment record's sense: settled captures and the one the processor settles later. */
const recordedCapture = (context: PaymentContext) =>
  context.intent ? formatAmount(amounts.sum(context.amount_captured, context.amount_capture_requested), context.intent.currency) : context.amount_captured;
