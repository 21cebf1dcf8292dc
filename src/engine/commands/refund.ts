// Extension: full (amount omitted) or partial refund, never above amount_refundable.
import type { PaymentRecord } from "../../present/payment-record.js";
import { InvalidRequest } from "../../errors.js";
import { parseInput, RefundInput } from "../../inputs.js";
import { formatAmount } from "../../money.js";
import { can } from "../allowed.js";
import { attempt, type AttemptStep } from "../attempt.js";
import type { Core } from "../core.js";
import { commandClock, type CommandContext } from "../payment-streams.js";

export function refund(core: Core) {
  return async (input: unknown, ctx: CommandContext = {}): Promise<PaymentRecord> => {
    const req = parseInput(RefundInput, input);
    ctx = commandClock(core.clock, ctx);
    const loaded = await core.payments.onPayment(req.external_account_id, req.payment_id, async (loaded) => {
      core.requireAllowed(loaded, "refund");
      const payment = core.viewOf(loaded);
      const refundable = core.recordOf(loaded).amount_refundable;
      const amount = req.amount === undefined ? refundable : formatAmount(core.amountIn(req.amount, payment.intent.currency), payment.intent.currency);
      const step: AttemptStep = {
        attempt: (attempt_id) => ({ type: "RefundAttempted", version: 1, data: { attempt_id, amount, reason: req.reason ?? null } }),
        call: async (key) => ({ call: "refund", ...(await core.processorOf(loaded).refund({ payment, amount, key })) }),
      };
      if (!can(loaded.snapshot, step.attempt("probe"))) throw new InvalidRequest(`amount: ${amount} exceeds amount_refundable ${refundable}`, "amount", "amount_too_large");
      return attempt(core, req.payment_id, loaded, step, ctx, "refund");
    });
    return core.recordOf(loaded);
  };
}
