// Spec §4.4: authorize. A stored card is charged; a processor A terminal starts collecting; a card
// the processor B client SDK collected is processed.
import { guardHolds, hasTag, type PaymentSnapshot } from "../../../machines/fold.js";
import type { TerminalRecord } from "../../../projections/terminals.js";
import { InvalidRequest } from "../../errors.js";
import type { AuthorizeInput } from "../../inputs.js";
import { shopperTimedOut } from "../outcomes.js";
import { ALREADY_PROCESSED, authorizeCollectedCard, collectedByClientSdk, processedByCollect } from "./client-sdk.js";
import { refusal, unlessAllowed, UNRECORDED, type Decision } from "./decision.js";

export function decideAuthorize(input: AuthorizeInput, payment: PaymentSnapshot, context: { terminal?: TerminalRecord }): Decision<"terminal"> {
  return withReference(input, payment, decideAttempt(input, payment, context));
}

/**
 * Spec §4.4: external_payment_id, the caller's reference for the transaction, goes with the
 * authorization's attempt when it changes the payment's (then its external_transaction_id, §2.1).
 */
function withReference(input: AuthorizeInput, payment: PaymentSnapshot, decision: Decision<"terminal">): Decision<"terminal"> {
  const given = input.external_payment_id;
  if (!("attempt" in decision) || given === undefined || given === payment.context.intent!.external_transaction_id) return decision;
  return { ...decision, before: [{ type: "TransactionReferenceGiven", version: 2, data: { external_transaction_id: given } }] };
}

/** Why a terminal authorization is refused in a status that does not allow it. */
const TERMINAL_STEP = "a terminal authorization is allowed from requires_payment_method or error";
/** The same for a processor B reader's payment: the client SDK collects its card first. */
const READER_STEP = "a reader's payment is authorized once, after the client SDK collected its card (payment_method_requested)";

function decideAttempt(input: AuthorizeInput, payment: PaymentSnapshot, { terminal }: { terminal?: TerminalRecord }): Decision<"terminal"> {
  const intent = payment.context.intent!;
  if (guardHolds(payment, "isStoredCard")) {
    // card not present: charge the card on file (automatic capture captures in the same step)
    if (input.terminal_id !== undefined) return { refuse: new InvalidRequest("terminal_id is not sent for a stored-card charge", "terminal_id", "parameter_unexpected") };
    return unlessAllowed(payment, "authorize") ?? { attempt: { type: "AuthorizationAttempted", version: 1, data: { attempt_id: UNRECORDED, amount: intent.amount } } };
  }
  if (collectedByClientSdk(payment)) {
    // the card was collected already: a terminal named is the reader it was collected on, or none
    const reader = payment.context.terminal?.terminal_id ?? null;
    if (input.terminal_id === undefined || input.terminal_id === reader) return authorizeCollectedCard(payment);
    if (!terminal) return { need: "terminal" };
    return { refuse: new InvalidRequest(`terminal_id: the card was collected ${reader ? `on ${reader}` : "by the client SDK, on no terminal"}; authorize with ${reader ? "that terminal_id, or " : ""}no terminal_id`, "terminal_id", "parameter_invalid") };
  }
  // a card present on a reader too: whatever terminal is named, the collect already processed it
  if (processedByCollect(payment)) return { refuse: refusal(payment, "authorize", ALREADY_PROCESSED) };
  if (!guardHolds(payment, "isCardPresent")) {
    // processor A has no client SDK: only a card on file, given at creation, is charged without a terminal
    const how = intent.processor === "B" ? "from a card on file, or collected by the processor B client SDK first" : "from a card on file (payment_method_id, given at creation), which this intent has none of";
    return { refuse: refusal(payment, "authorize", `a card not present is charged ${how}`) };
  }
  // past authorization (a reader's payment the SDK processed), the status is what refuses (409), not the missing field
  if (input.terminal_id === undefined) return unlessAllowed(payment, "authorize", TERMINAL_STEP) ?? { refuse: new InvalidRequest("terminal_id: required to authorize a card-present payment", "terminal_id", "parameter_missing") };
  if (!terminal) return { need: "terminal" };
  if (terminal.terminal_type === "B_reader") {
    // past authorization, the status is what refuses (409 with the next steps), not the reader
    return unlessAllowed(payment, "authorize", READER_STEP) ?? { refuse: new InvalidRequest(`terminal_id: ${terminal.terminal_id} is a processor B reader; its card is collected by the client SDK with the intent's client secret`, "terminal_id", "terminal_collects_with_client_sdk") };
  }
  // refused before the terminal is asked: a second auth must not disturb a collection in progress
  const { terminal_id, terminal_type } = terminal;
  return (
    unlessAllowed(payment, "authorize", TERMINAL_STEP) ?? {
      attempt: { type: "TerminalAuthorizationAttempted", version: 1, data: { attempt_id: UNRECORDED, terminal_id, terminal_type } },
      terminal,
    }
  );
}

/** Spec §4.4: the synchronous terminal's deadline passed with the terminal still collecting: it is stopped, the shopper timed out. */
export function decideShopperTimeout(input: { terminal_id?: string }, payment: PaymentSnapshot): Decision {
  if (!hasTag(payment, "collecting_card")) return { unchanged: true };
  return { append: [shopperTimedOut()], stopTerminal: input.terminal_id! };
}
