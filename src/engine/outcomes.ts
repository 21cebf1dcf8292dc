// A processor's authorization outcome as the payment events that record it.
import type { PaymentEvent } from "../../machines/events.js";
import type { AuthorizationOutcome } from "../processors/port.js";

export function outcomeEvents(outcome: AuthorizationOutcome): PaymentEvent[] {
  switch (outcome.kind) {
    case "authorized":
      return [{ type: "PaymentAuthorized", version: 1, data: outcome.authorization }];
    case "captured":
      return [{ type: "PaymentCaptured", version: 1, data: { amount: outcome.authorization.amount_authorized, authorization: outcome.authorization } }];
    case "capture_requested":
      return [{ type: "CaptureRequested", version: 1, data: { amount: outcome.authorization.amount_authorized, authorization: outcome.authorization } }];
    case "failed":
      return [{ type: "AuthorizationFailed", version: 1, data: { last_error: outcome.last_error, last_error_code: outcome.last_error_code } }];
  }
}
