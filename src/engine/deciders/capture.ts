// Spec §4.6: capture (all or part of the authorization; the rest is released).
import type { AttemptEvent } from "../../../machines/events.js";
import type { PaymentSnapshot } from "../../../machines/fold.js";
import { InvalidRequest } from "../../errors.js";
import type { CaptureInput } from "../../inputs.js";
import { can } from "../allowed.js";
import { amountIn } from "./amounts.js";
import { unlessAllowed, UNRECORDED, type Decision } from "./decision.js";

export function decideCapture(input: CaptureInput, payment: PaymentSnapshot): Decision {
  const { intent, amount_capturable } = payment.context;
  const amount = amountIn(input.amount, intent!.currency);
  if (typeof amount !== "string") return amount;
  const attempt: AttemptEvent = { type: "CaptureAttempted", version: 1, data: { attempt_id: UNRECORDED, amount } };
  if (can(payment, attempt)) return { attempt };
  return unlessAllowed(payment, "capture") ?? { refuse: new InvalidRequest(`amount: ${amount} exceeds amount_capturable ${amount_capturable}`, "amount", "amount_too_large") };
}
