// Processor B client SDK (spec §4.8): process the payment whose card the SDK collected, i.e.
// authorize the collected card. A card-not-present collect processes its payment itself
// (./collect-payment-method.ts): processing it again answers the payment as it stands, acting no
// second time, as an SDK that processes after every collect expects; only when that processing did
// not happen (the processor did nothing) is process-payment the way to retry it.
import type { PaymentSnapshot } from "../../../machines/fold.js";
import { authorizeCollectedCard, collectedByClientSdk, processedByCollect } from "./client-sdk.js";
import { refusal, type Decision } from "./decision.js";

export function decideProcessPayment(_input: unknown, payment: PaymentSnapshot): Decision {
  if (processedByCollect(payment)) return { unchanged: true };
  if (!collectedByClientSdk(payment)) return { refuse: refusal(payment, "process_payment", "the client SDK processes a payment after collecting its payment method") };
  return authorizeCollectedCard(payment);
}
