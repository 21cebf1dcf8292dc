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
  const refused = unlessAllowed(payment, "refund");
  if (refused) return refused;
  const { intent, amount_captured, amount_refunded } = payment.context;
  const refundable = formatAmount(amounts.difference(amount_captured, amount_refunded), intent!.currency);
  const amount = input.amount === undefined ? refundable : amountIn(input.amount, intent!.currency);
  if (typeof amount !== "string") return amount;
  const attempt: AttemptEvent = { type: "RefundAttempted", version: 1, data: { attempt_id: UNRECORDED, amount, reason: input.reason ?? null } };
  if (!can(payment, attempt)) return { refuse: new InvalidRequest(`amount: ${amount} exceeds amount_refundable ${refundable}`, "amount", "amount_too_large") };
  return { attempt };
}
