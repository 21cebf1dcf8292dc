// Processor B client SDK: a card read on a reader or a card form, for the intent of the client
// secret. Reading the card moves no money (no attempt): the card the processor read is recorded.
import type { Card } from "../../../machines/events.js";
import type { PaymentSnapshot } from "../../../machines/fold.js";
import type { TerminalRecord } from "../../../projections/terminals.js";
import { InvalidRequest } from "../../errors.js";
import type { CollectPaymentMethodInput } from "../../inputs.js";
import { can, probeCard } from "../allowed.js";
import { refusal, unlessAllowed, type Decision } from "./decision.js";

export interface CollectContext {
  /** The reader named by terminal_id. */
  terminal?: TerminalRecord;
  /** The card the processor read from the client (asked only once the collect is allowed). */
  card?: Card;
}

export function decideCollect(input: CollectPaymentMethodInput, payment: PaymentSnapshot, { terminal, card }: CollectContext): Decision<"terminal" | "card"> {
  const refused = unlessAllowed(payment, "collect_payment_method");
  if (refused) return refused;
  // the collect is allowed, so a reader given or missing is what the machine refuses (a card-present
  // card is read on a reader, any other on the card form): said before the card is read
  if (!can(payment, { type: "PaymentMethodCollected", version: 1, data: { card: probeCard(payment), terminal_id: input.terminal_id ?? null } })) {
    return {
      refuse:
        input.terminal_id === undefined
          ? new InvalidRequest("terminal_id: required: a card-present payment's card is read on a processor B reader", "terminal_id", "parameter_missing")
          : new InvalidRequest("terminal_id: not sent for a card-not-present payment: its card is collected on the card form", "terminal_id", "parameter_unexpected"),
    };
  }
  if (input.terminal_id !== undefined) {
    if (!terminal) return { need: "terminal" };
    if (terminal.terminal_type !== "B_reader") return { refuse: new InvalidRequest(`terminal_id: ${input.terminal_id} is not a processor B reader`, "terminal_id", "parameter_invalid") };
  }
  if (!card) return { need: "card" };
  const collected = { type: "PaymentMethodCollected", version: 1, data: { card, terminal_id: input.terminal_id ?? null } } as const;
  // the machine has the last word on which collect fits the intent
  if (!can(payment, collected)) return { refuse: refusal(payment, "collect_payment_method") };
  return { append: [collected] };
}
