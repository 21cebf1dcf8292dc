// Processor B client SDK (spec §4.8): process the payment whose card the SDK collected, i.e.
// authorize the collected card; automatic capture follows. A card-not-present collect processes
// its payment itself (./collect-payment-method.ts): processing it again is refused, as Stripe
// refuses to confirm a PaymentIntent already confirmed (409 payment_intent_unexpected_state,
// naming the status). Only when that processing did not happen (the processor did nothing) is
// process-payment the way to retry it.
import { hasTag } from "../../../machines/fold.js";
import type { PaymentRecord } from "../../present/payment-record.js";
import { parseInput, ProcessPaymentInput } from "../../inputs.js";
import { attempt } from "../attempt.js";
import { onPaymentOfSecret } from "../client-secret.js";
import type { Core } from "../core.js";
import { followUp } from "../follow-up.js";
import { commandClock, type CommandContext, type Loaded } from "../payment-streams.js";

/** A card the processor B client SDK collected and that is not processed yet. */
export const collectedByClientSdk = (loaded: Loaded) => {
  const payment = loaded.snapshot.context;
  return payment.processor === "B" && payment.card !== null && hasTag(loaded.snapshot, "collecting_card");
};

/** Authorizes the card the client SDK collected; automatic capture follows. */
export async function processCollected(core: Core, paymentId: string, loaded: Loaded, ctx: CommandContext): Promise<Loaded> {
  core.requireAllowed(loaded, "authorize");
  const payment = core.viewOf(loaded);
  const after = await attempt(core, paymentId, loaded, {
    attempt: (attempt_id) => ({ type: "AuthorizationAttempted", version: 1, data: { attempt_id, amount: payment.intent.amount } }),
    call: async (key) => ({ call: "authorize", outcome: await core.processorOf(loaded).authorizeCollectedCard({ payment, key }) }),
  }, ctx, "authorize");
  return followUp(core, paymentId, after, ctx);
}

/**
 * Whether collecting also processes the payment: on a card form (card not present: the spec's
 * flow is collect, then save the card) and with automatic capture (the spec's reader flow is
 * collect, then save the card once captured). A reader with manual capture is collected, then
 * processed (the spec's flow names both steps).
 */
export const collectProcesses = (intent: { payment_method_types: string; capture_method: string }) =>
  intent.payment_method_types === "card" || intent.capture_method === "automatic";

/** The collect processed this payment (a card it collected is there and not waiting to be processed). */
export const processedByCollect = (loaded: Loaded) => {
  const { intent, card } = loaded.snapshot.context;
  return collectProcesses(intent!) && intent!.processor === "B" && intent!.payment_method_id === null && card !== null && !collectedByClientSdk(loaded);
};
export const ALREADY_PROCESSED = "collecting the payment method already processed the payment (card not present, or automatic capture)";

export function processPayment(core: Core) {
  return async (input: unknown, ctx: CommandContext = {}): Promise<PaymentRecord> => {
    const { client_secret } = parseInput(ProcessPaymentInput, input);
    ctx = commandClock(core.clock, ctx);
    const loaded = await onPaymentOfSecret(core, client_secret, async (loaded) => {
      // an SDK that processes after every collect gets the payment its collect already processed, acting no second time
      if (processedByCollect(loaded)) return loaded;
      if (!collectedByClientSdk(loaded)) core.refuse(loaded, "process_payment", "the client SDK processes a payment after collecting its payment method");
      return processCollected(core, core.viewOf(loaded).intent.payment_id, loaded, ctx);
    });
    return core.recordOf(loaded);
  };
}
