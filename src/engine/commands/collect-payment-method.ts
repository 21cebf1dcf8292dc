// Processor B client SDK: a card read on a reader or a card form, for the intent of the client
// secret. Reading the card moves no money (no attempt). Where the spec's flow has no process step
// (§4.8: card not present, and a reader with automatic capture: collect, then save the card) the
// collect also processes the payment (collectProcesses); else process-payment does.
import type { PaymentEvent } from "../../../machines/events.js";
import type { PaymentRecord } from "../../present/payment-record.js";
import { InvalidRequest } from "../../errors.js";
import { CollectPaymentMethodInput, parseInput } from "../../inputs.js";
import { onPaymentOfSecret } from "../client-secret.js";
import type { Core } from "../core.js";
import { commandClock, type CommandContext } from "../payment-streams.js";
import { collectProcesses, processCollected } from "./process-payment.js";

export function collectPaymentMethod(core: Core) {
  return async (input: unknown, ctx: CommandContext = {}): Promise<PaymentRecord> => {
    const { client_secret, card_number = "4242424242424242", terminal_id } = parseInput(CollectPaymentMethodInput, input);
    ctx = commandClock(core.clock, ctx);
    const loaded = await onPaymentOfSecret(core, client_secret, async (loaded) => {
      const payment = core.viewOf(loaded);
      if (terminal_id !== undefined) {
        const terminal = await core.getTerminal(payment.intent.external_account_id, terminal_id);
        if (terminal.terminal_type !== "B_reader") throw new InvalidRequest(`terminal_id: ${terminal_id} is not a processor B reader`, "terminal_id", "parameter_invalid");
      }
      core.requireAllowed(loaded, "collect_payment_method");
      const card = await core.processors.get("B").readCardFromClient({ payment, card_number });
      const event: PaymentEvent = { type: "PaymentMethodCollected", version: 1, data: { card, terminal_id: terminal_id ?? null } };
      const processes = collectProcesses(payment.intent);
      // when processing follows, the answer (and so the idempotency record) is known after its outcome
      const collected = await core.payments.append(payment.intent.payment_id, loaded, [event], processes ? { ...ctx, idempotency: undefined } : ctx, "collect_payment_method");
      return processes ? processCollected(core, payment.intent.payment_id, collected, ctx) : collected;
    });
    return core.recordOf(loaded);
  };
}
