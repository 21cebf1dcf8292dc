// The reconciler's rule (../reconcile.ts): what to append for a payment whose attempt has no outcome
// or whose terminal is past its deadline, from what the processor recorded (its lookup). Pure.
import type { AttemptType, PaymentEvent } from "../../../machines/events.js";
import { hasTag, type PaymentSnapshot } from "../../../machines/fold.js";
import type { PaymentView, RecordedOutcome } from "../../processors/port.js";
import { abandoned, acceptedOrAbandoned, authorizationEvents, NEVER_RECEIVED, outcomeEvents, shopperTimedOut } from "../outcomes.js";

export interface Resolved {
  /** What was open: the attempt's type, or "TerminalWait" for a terminal collection past its deadline. */
  open: AttemptType | "TerminalWait";
  attempt_id: string | null;
  /** What the processor said: its recorded call, "never_received", or "still_collecting". */
  processor: string;
  events: PaymentEvent[];
  /** The terminal to stop first (its collection is over). */
  stopTerminal?: string;
  /** What the processor answered that the payment does not take (its attempt abandoned as outcome_refused): kept for an operator. */
  unfit?: PaymentEvent[];
}

/** The key to look the open call up with at the processor, or null when nothing is open. */
export function openKey(payment: PaymentSnapshot): string | null | undefined {
  const { attempt, terminal } = payment.context;
  if (attempt) return attempt.data.attempt_id;
  if (!terminal || terminal.terminal_type === "B_reader" || !hasTag(payment, "collecting_card")) return null;
  return terminal.attempt_id;
}

/**
 * The resolution, given the processor's record of the open call (never_received when it has none).
 * null when nothing is open any more (closed meanwhile, by its command or another process).
 */
export function resolveOpen(payment: PaymentSnapshot, recorded: RecordedOutcome | "never_received", pastTerminalDeadline: boolean): Resolved | null {
  const view = payment.context as PaymentView;
  const attempt = view.attempt;
  if (attempt) {
    const { attempt_id } = attempt.data;
    const resolution = { open: attempt.type, attempt_id, processor: recorded === "never_received" ? recorded : recorded.call };
    if (recorded === "never_received") return { ...resolution, events: [abandoned(attempt_id, NEVER_RECEIVED)] };
    const answer = outcomeEvents(view, recorded);
    const events = acceptedOrAbandoned(payment, attempt_id, answer);
    if (events !== answer) return { ...resolution, events, unfit: answer };
    // a terminal that started and is still collecting: past the blocking auth's deadline, that is over
    if (pastTerminalDeadline && attempt.type === "TerminalAuthorizationAttempted" && events.length === 1) {
      return { ...resolution, processor: "still_collecting", events: [...events, shopperTimedOut()], stopTerminal: attempt.data.terminal_id };
    }
    return { ...resolution, events };
  }
  const terminal = view.terminal;
  if (!terminal || terminal.terminal_type === "B_reader" || !hasTag(payment, "collecting_card")) return null;
  const resolution = { open: "TerminalWait" as const, attempt_id: terminal.attempt_id ?? null };
  if (recorded !== "never_received" && recorded.call === "start_terminal" && recorded.outcome) {
    return { ...resolution, processor: "start_terminal", events: authorizationEvents(recorded.outcome) };
  }
  return { ...resolution, processor: "still_collecting", events: [shopperTimedOut()], stopTerminal: terminal.terminal_id };
}
