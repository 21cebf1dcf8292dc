// Extension: cancel before capture. An authorization is released (void: an attempt); a terminal
// still collecting is stopped (no money moved yet, so no attempt).
import type { PaymentEvent } from "../../../machines/events.js";
import { hasTag } from "../../../machines/fold.js";
import type { PaymentRecord } from "../../present/payment-record.js";
import { CancelInput, parseInput } from "../../inputs.js";
import { can } from "../allowed.js";
import { attempt, type AttemptStep } from "../attempt.js";
import type { Core } from "../core.js";
import { commandClock, type CommandContext } from "../payment-streams.js";

export function cancel(core: Core) {
  return async (input: unknown, ctx: CommandContext = {}): Promise<PaymentRecord> => {
    const req = parseInput(CancelInput, input);
    ctx = commandClock(core.clock, ctx);
    const cancellation_reason = req.cancellation_reason ?? null;
    const loaded = await core.payments.onPayment(req.external_account_id, req.payment_id, async (loaded) => {
      core.requireAllowed(loaded, "cancel");
      const payment = core.viewOf(loaded);
      const voidStep: AttemptStep = {
        attempt: (attempt_id) => ({ type: "VoidAttempted", version: 1, data: { attempt_id, cancellation_reason } }),
        call: async (key) => (await core.processorOf(loaded).void({ payment, key }), { call: "void" }),
      };
      // the machine takes a void where an authorization is held (requires_capture)
      if (can(loaded.snapshot, voidStep.attempt("probe"))) return attempt(core, req.payment_id, loaded, voidStep, ctx, "cancel");
      if (hasTag(loaded.snapshot, "collecting_card") && payment.terminal) {
        await core.processorOf(loaded).cancelTerminalAuthorization({ payment, terminal_id: payment.terminal.terminal_id });
      }
      const event: PaymentEvent = { type: "PaymentCanceled", version: 1, data: { cancellation_reason } };
      return core.payments.append(req.payment_id, loaded, [event], ctx, "cancel");
    });
    return core.recordOf(loaded);
  };
}
