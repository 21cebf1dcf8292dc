// What the machine allows a payment now, asked of the machine itself: each command stands for
// the first event it could append (its attempt, for a processor call: "probes"), and a command is allowed when the machine accepts one of
// them in the current state, guards included. No status rules live here.
import type { Card, PaymentEvent } from "../../machines/events.js";
import { applyPaymentEvent, type PaymentSnapshot } from "../../machines/fold.js";
import { formatAmount } from "../money.js";

export const COMMANDS = ["authorize", "collect_payment_method", "capture", "cancel", "refund", "save_card"] as const;
export type Command = (typeof COMMANDS)[number];

export const can = (snapshot: PaymentSnapshot, event: PaymentEvent) => applyPaymentEvent(snapshot, event) !== null;

/** The payment's card, or a stand-in when none was collected yet. */
export function probeCard(snapshot: PaymentSnapshot): Card {
  return snapshot.context.card ?? { type: "card_present", brand: "visa", last_4: "0000", exp_month: "12", exp_year: 2030, cardholder_name: null, funding: "unknown" };
}

// the smallest amount of any currency: a refund of it is allowed whenever anything is refundable
const SMALLEST = formatAmount(0.001, "KWD");

/** Events that stand for each command when asking the machine what is allowed now. */
function probes(snapshot: PaymentSnapshot, command: Command): PaymentEvent[] {
  const { intent, amount_capturable, amount_captured, amount_refunded } = snapshot.context;
  if (!intent) return [];
  switch (command) {
    case "authorize":
      return [
        { type: "TerminalAuthorizationAttempted", version: 1, data: { attempt_id: "probe", terminal_id: "probe", terminal_type: "A_sync" } },
        { type: "AuthorizationAttempted", version: 1, data: { attempt_id: "probe", amount: intent.amount } },
      ];
    case "collect_payment_method":
      return [{ type: "PaymentMethodCollected", version: 1, data: { card: probeCard(snapshot), terminal_id: intent.payment_method_types === "card_present" ? "probe" : null } }];
    case "capture":
      return [{ type: "CaptureAttempted", version: 1, data: { attempt_id: "probe", amount: amount_capturable } }];
    case "cancel":
      return [
        { type: "VoidAttempted", version: 1, data: { attempt_id: "probe", cancellation_reason: null } },
        { type: "PaymentCanceled", version: 1, data: { cancellation_reason: null } },
      ];
    case "refund":
      return amount_captured === amount_refunded ? [] : [{ type: "RefundAttempted", version: 1, data: { attempt_id: "probe", amount: SMALLEST, reason: null } }];
    case "save_card":
      return [{ type: "CardSaveAttempted", version: 1, data: { attempt_id: "probe", external_customer_id: intent.external_customer_id ?? "probe" } }];
  }
}

export function commandAllowed(snapshot: PaymentSnapshot, command: Command): boolean {
  return probes(snapshot, command).some((p) => can(snapshot, p));
}

/** The commands the machine allows in this state (its guards included). */
export function allowedCommands(snapshot: PaymentSnapshot): Command[] {
  return COMMANDS.filter((c) => commandAllowed(snapshot, c));
}
