// The processor B client SDK's rules (spec §4.8), shared by the deciders of authorize, collect and
// process: a card the SDK collected is authorized (processed) once; where the spec's flow has no
// process step, collecting processes the payment itself.
import { collectProcesses } from "../../../machines/client-sdk.js";
import { guardHolds, hasTag, type PaymentSnapshot } from "../../../machines/fold.js";
import { unlessAllowed, UNRECORDED, type Decision } from "./decision.js";

/** A card the processor B client SDK collected and that is not processed yet (the machine's guard, while collecting). */
export const collectedByClientSdk = (payment: PaymentSnapshot) => guardHolds(payment, "hasCollectedCard") && hasTag(payment, "collecting_card");

/** The collect processed this payment (a card it collected is there and not waiting to be processed). */
export const processedByCollect = (payment: PaymentSnapshot) => {
  const { intent, card } = payment.context;
  return collectProcesses(intent!) && intent!.processor === "B" && intent!.payment_method_id === null && card !== null && !collectedByClientSdk(payment);
};

export const ALREADY_PROCESSED = "collecting the payment method already processed the payment (card not present, or automatic capture)";

/** Authorizes the card the client SDK collected (automatic capture follows: the policy). */
export const authorizeCollectedCard = (payment: PaymentSnapshot): Decision =>
  unlessAllowed(payment, "authorize") ?? { attempt: { type: "AuthorizationAttempted", version: 1, data: { attempt_id: UNRECORDED, amount: payment.context.intent!.amount } } };
