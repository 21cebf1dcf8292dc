// What an event says besides the status and amounts a timeline row already shows: the facts an
// auditor asks about (the reference given, why an attempt was abandoned, why a payment failed...).
import type { RecordedEvent } from "../store/port.js";

// a reference may be a number (external_transaction_id)
const text = (v: unknown): string | null => (typeof v === "string" || typeof v === "number" ? String(v) : null);

/** One short line, or null when the row's columns already say everything. */
export function eventDetail(e: Pick<RecordedEvent, "type" | "data">): string | null {
  const d = e.data as Record<string, unknown>;
  const attempt = (what: string) => `attempt ${text(d.attempt_id)}${what}`;
  switch (e.type) {
    case "PaymentIntentCreated":
      return text(d.external_transaction_id) === null ? null : `reference ${text(d.external_transaction_id)}`;
    case "TransactionReferenceGiven":
      return text(d.external_transaction_id) === null ? "reference given back: none" : `reference ${text(d.external_transaction_id)}`;
    case "AuthorizationAttempted":
    case "CaptureAttempted":
      return attempt(` for ${text(d.amount)}`);
    case "RefundAttempted":
      return attempt(` for ${text(d.amount)}${text(d.reason) ? `, reason ${text(d.reason)}` : ""}`);
    case "TerminalAuthorizationAttempted":
      return attempt(` on ${text(d.terminal_id)}`);
    case "VoidAttempted":
      return attempt(text(d.cancellation_reason) ? `, reason ${text(d.cancellation_reason)}` : "");
    case "CardSaveAttempted":
      return attempt(` for customer ${text(d.external_customer_id)}`);
    case "AttemptAbandoned":
      return attempt(` abandoned: ${text(d.reason)}`);
    case "AuthorizationFailed":
      return `${text(d.last_error)}${text(d.last_error_code) ? ` (${text(d.last_error_code)})` : ""}`;
    case "PaymentCanceled":
      return text(d.cancellation_reason) === null ? null : `reason ${text(d.cancellation_reason)}`;
    case "PaymentRefunded":
      return `refund ${text(d.refund_id)}`;
    case "CardSaved":
      return `saved as ${text(d.payment_method_id)} for customer ${text(d.external_customer_id)}`;
    default:
      return null;
  }
}
