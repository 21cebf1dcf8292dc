// Extension: full (amount omitted) or partial refund, never above amount_refundable.
import type { AttemptEvent } from "../../../machines/events.js";
import type { PaymentSnapshot } from "../../../machines/fold.js";
import { InvalidRequest } from "../../errors.js";
import type { RefundInput } from "../../inputs.js";
import { amounts, formatAmount } from "../../money.js";
import { can } from "../allowed.js";
import { amountIn } from "./amounts.js";
import { unlessAllowed, UNRECORDED, type Decision } from "./decision.js";

export function decideRefund(input: RefundInput, payment: PaymentSnapshot): Decision {
  const { intent, amount_captured, amount_refunded } = payment.context;
  const refundable = intent ? formatAmount(amounts.difference(amount_captured, amount_refunded), intent.currency) : null;
  // say why, not only the status: a succeeded payment refunds until nothing is left; a requested
  // capture is refunded once the processor reports it settled (spec §3: capture_requested)
  const why =
    payment.value === "succeeded" && refundable !== null && amounts.compare(refundable, "0") === 0 ? `fully refunded: amount_refundable ${refundable}` :
    payment.value === "capture_requested" ? "the capture is requested and not settled yet: it can be refunded once the payment is succeeded" :
    undefined;
  const refused = unlessAllowed(payment, "refund", why);
  if (refused) return refused;
  const amount = input.amount === undefined ? refundable! : amountIn(input.amount, intent!.currency);
  if (typeof amount !== "string") return amount;
  const attempt: AttemptEvent = { type: "RefundAttempted", version: 1, data: { attempt_id: UNRECORDED, amount, reason: input.reason ?? null } };
  if (!can(payment, attempt)) return { refuse: new InvalidRequest(`amount: ${amount} exceeds amount_refundable ${refundable}`, "amount", "amount_too_large") };
  return { attempt };
}
