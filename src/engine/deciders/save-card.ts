// Spec §4.7: save the payment's card on file for a customer.
import type { AttemptEvent } from "../../../machines/events.js";
import type { PaymentSnapshot } from "../../../machines/fold.js";
import type { CustomerCardRecord } from "../../../projections/customer-cards.js";
import { InvalidRequest } from "../../errors.js";
import { amounts } from "../../money.js";
import type { SaveCardInput } from "../../inputs.js";
import { can, commandAllowed } from "../allowed.js";
import { refusal, UNRECORDED, type Decision } from "./decision.js";

/** Captured, as the machine recorded it (spec §2.3: a card is saved from a captured payment; a capture the processor settles later counts). */
const captured = ({ context }: PaymentSnapshot) => amounts.compare(context.amount_captured, "0") > 0 || amounts.compare(context.amount_capture_requested, "0") > 0;

/** What the handler gathers: the card on file a stored-card charge charged, if it was saved here (null: not). */
export interface SaveCardContext {
  cardOnFile?: CustomerCardRecord | null;
}

export function decideSaveCard(input: SaveCardInput, payment: PaymentSnapshot, { cardOnFile }: SaveCardContext = {}): Decision<"card_on_file"> {
  const { saved_card, intent } = payment.context;
  // saving again for the same customer answers with the card already saved; so does saving the card
  // on file a captured stored-card charge charged, for its customer, when it was saved here
  if (saved_card?.external_customer_id === input.external_customer_id) return { unchanged: true };
  // (not when the shopper said no: allow_saving_card false is 409, as for every payment)
  if (intent?.payment_method_id && intent.external_customer_id === input.external_customer_id && intent.allow_saving_card !== false && captured(payment)) {
    if (cardOnFile === undefined) return { need: "card_on_file" };
    if (cardOnFile?.external_customer_id === input.external_customer_id) return { unchanged: true };
  }
  const saveFor = (external_customer_id: string): AttemptEvent => ({ type: "CardSaveAttempted", version: 1, data: { attempt_id: UNRECORDED, external_customer_id } });
  const attempt = saveFor(input.external_customer_id);
  if (can(payment, attempt)) return { attempt };
  // the machine would save it for the customer the payment was created for: the customer given is what it refuses
  const customer = intent?.external_customer_id ?? null;
  if (customer !== null && can(payment, saveFor(customer))) {
    return { refuse: new InvalidRequest(`external_customer_id: payment ${intent!.payment_id} was created for customer ${customer}; its card is saved for that customer`, "external_customer_id", "parameter_invalid") };
  }
  return { refuse: refusal(payment, "save_card", whyNot(payment)) };
}


/** Why the machine refuses to save this payment's card: the first fact of the payment that explains it. */
function whyNot(payment: PaymentSnapshot): string {
  const { saved_card, intent, terminal, card } = payment.context;
  if (saved_card) return `its card is saved already, for customer ${saved_card.external_customer_id}`;
  // a card on file comes from a captured payment (spec §2.3); a canceled one never will be
  if (payment.value === "canceled") return "it was canceled: a card is saved only from a captured payment (spec §2.3)";
  if (terminal?.terminal_type === "A_async") return "the asynchronous terminal type does not support card on file";
  if (intent?.allow_saving_card === false) return "it was created with allow_saving_card false: its card may not be saved";
  if (intent?.payment_method_id) return `it charges the card on file ${intent.payment_method_id}, which is saved already`;
  // a failed attempt (a decline, a shopper's cancel) left nothing captured to save from
  if (payment.context.last_error !== null && !commandAllowed(payment, "capture")) {
    return `its last attempt was not approved (${payment.context.last_error}): a card is saved from a captured payment (spec §2.3); authorize it again and capture it first`;
  }
  if (!card) return "no card has been collected for it yet";
  if (intent && intent.allow_saving_card === null && intent.external_customer_id === null) return "it was created without allow_saving_card or external_customer_id, and saving needs one of them";
  if (commandAllowed(payment, "capture")) {
    // before capture only a card-not-present card of an intent that allows saving (spec §4.8)
    return intent?.payment_method_types === "card"
      ? "saving before capture needs an intent created with allow_saving_card true (spec §4.8): capture it first, then save its card"
      : "capture it first: a card-present card can be saved once the payment is captured (spec §4.6)";
  }
  return "this payment's card cannot be saved now";
}
