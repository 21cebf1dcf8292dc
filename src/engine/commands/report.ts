// What a processor reports on its own about a payment (a terminal's outcome, a capture settled):
// events without an attempt id; then what follows on its own.
import type { PaymentEvent } from "../../../machines/events.js";
import { hasTag } from "../../../machines/fold.js";
import type { ProcessorEvent } from "../../processors/port.js";
import type { Core } from "../core.js";
import { followUp } from "../follow-up.js";
import { authorizationEvents } from "../outcomes.js";
import { commandClock, type CommandContext } from "../payment-streams.js";

export function report(core: Core) {
  return async (paymentId: string, event: ProcessorEvent): Promise<void> => {
    const { now } = commandClock(core.clock, {});
    await core.payments.onPayment(null, paymentId, async (current) => {
      const ctx: CommandContext = { now, actor: `processor:${current.snapshot.context.processor}` };
      if (!hasTag(current.snapshot, "awaiting_processor")) core.refuse(current, "record processor outcome", "the payment awaits no processor outcome");
      const events: PaymentEvent[] =
        event.kind === "capture_settled" ? [{ type: "PaymentCaptured", version: 1, data: { amount: event.amount, authorization: null } }] : authorizationEvents(event);
      const after = await core.payments.append(paymentId, current, events, ctx, "record processor outcome");
      return followUp(core, paymentId, after, ctx);
    });
  };
}
