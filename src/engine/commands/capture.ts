// Spec §4.6: capture (all or part of the authorization; the rest is released).
import type { PaymentRecord } from "../../present/payment-record.js";
import { InvalidRequest } from "../../errors.js";
import { CaptureInput, parseInput } from "../../inputs.js";
import { formatAmount } from "../../money.js";
import { can } from "../allowed.js";
import { attempt, type AttemptStep } from "../attempt.js";
import type { Core } from "../core.js";
import { followUp } from "../follow-up.js";
import { commandClock, type CommandContext, type Loaded } from "../payment-streams.js";

export const captureStep = (core: Core, loaded: Loaded, amount: string): AttemptStep => ({
  attempt: (attempt_id) => ({ type: "CaptureAttempted", version: 1, data: { attempt_id, amount } }),
  call: async (key) => ({ call: "capture", outcome: await core.processorOf(loaded).capture({ payment: core.viewOf(loaded), amount, key }) }),
});

export function capture(core: Core) {
  return async (input: unknown, ctx: CommandContext = {}): Promise<PaymentRecord> => {
    const req = parseInput(CaptureInput, input);
    ctx = commandClock(core.clock, ctx);
    const loaded = await core.payments.onPayment(req.external_account_id, req.payment_id, async (loaded) => {
      const { currency } = core.viewOf(loaded).intent;
      const amount = formatAmount(core.amountIn(req.amount, currency), currency);
      const step = captureStep(core, loaded, amount);
      if (!can(loaded.snapshot, step.attempt("probe"))) {
        core.requireAllowed(loaded, "capture");
        throw new InvalidRequest(`amount: ${amount} exceeds amount_capturable ${core.viewOf(loaded).amount_capturable}`, "amount", "amount_too_large");
      }
      // a payment that saves its card does so once captured (spec §4.8)
      return followUp(core, req.payment_id, await attempt(core, req.payment_id, loaded, step, ctx, "capture"), ctx);
    });
    return core.recordOf(loaded);
  };
}
