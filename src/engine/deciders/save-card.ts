// Spec §4.7: save the payment's card on file for a customer.
import type { AttemptEvent } from "../../../machines/events.js";
import type { PaymentSnapshot } from "../../../machines/fold.js";
import type { SaveCardInput } from "../../inputs.js";
import { can } from "../allowed.js";
import { refusal, UNRECORDED, type Decision } from "./decision.js";

export function decideSaveCard(input: SaveCardInput, payment: PaymentSnapshot): Decision {
  // saving again for the same customer answers with the card already saved
  if (payment.context.saved_card?.external_customer_id === input.external_customer_id) return { unchanged: true };
  const attempt: AttemptEvent = { type: "CardSaveAttempted", version: 1, data: { attempt_id: UNRECORDED, external_customer_id: input.external_customer_id } };
  if (can(payment, attempt)) return { attempt };
  const reason = payment.context.terminal?.terminal_type === "A_async" ? "the asynchronous terminal type does not support card on file" : "this payment's card cannot be saved now";
  return { refuse: refusal(payment, "save_card", reason) };
}
