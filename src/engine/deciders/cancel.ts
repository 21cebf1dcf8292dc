// Extension: cancel before capture. An authorization is released (void: an attempt); a terminal
// still collecting is stopped (no money moved yet, so no attempt).
import type { AttemptEvent } from "../../../machines/events.js";
import { hasTag, type PaymentSnapshot } from "../../../machines/fold.js";
import type { CancelInput } from "../../inputs.js";
import { can } from "../allowed.js";
import { unlessAllowed, UNRECORDED, type Decision } from "./decision.js";

export function decideCancel(input: CancelInput, payment: PaymentSnapshot): Decision {
  const refused = unlessAllowed(payment, "cancel");
  if (refused) return refused;
  const cancellation_reason = input.cancellation_reason ?? null;
  // the machine takes a void where an authorization is held (requires_capture)
  const voided: AttemptEvent = { type: "VoidAttempted", version: 1, data: { attempt_id: UNRECORDED, cancellation_reason } };
  if (can(payment, voided)) return { attempt: voided };
  const canceled = { type: "PaymentCanceled", version: 1, data: { cancellation_reason } } as const;
  const terminal = payment.context.terminal;
  if (hasTag(payment, "collecting_card") && terminal) return { append: [canceled], stopTerminal: terminal.terminal_id };
  return { append: [canceled] };
}
