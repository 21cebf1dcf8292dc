// What a processor reports on its own about a payment (a terminal's outcome, a capture settled):
// events without an attempt id, taken only while the payment awaits the processor.
import type { PaymentEvent } from "../../../machines/events.js";
import { hasTag, type PaymentSnapshot } from "../../../machines/fold.js";
import type { ProcessorEvent } from "../../processors/port.js";
import { authorizationEvents } from "../outcomes.js";
import { refusal, type Decision } from "./decision.js";

export function decideReport(event: ProcessorEvent, payment: PaymentSnapshot): Decision {
  if (!hasTag(payment, "awaiting_processor")) return { refuse: refusal(payment, "record processor outcome", "the payment awaits no processor outcome") };
  const events: PaymentEvent[] = event.kind === "capture_settled" ? [{ type: "PaymentCaptured", version: 1, data: { amount: event.amount, authorization: null } }] : authorizationEvents(event);
  return { append: events };
}
