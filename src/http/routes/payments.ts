// Payment intents (spec §4.3–4.6) and the cancel/refund extensions. /v1 and /v2 accept the same
// requests; they differ only in how the final success status is written (presenters.ts).
import type { Engine } from "../../engine.js";
import { AuthorizeInput, CancelInput, CaptureInput, CreateIntentInput, GetPaymentInput, RefundInput } from "../../inputs.js";
import { presentCreated, presentPayment } from "../../present/api-versions.js";
import { defineRoute } from "../route.js";
import { CreatedIntentOut, PaymentRecordOut } from "../schemas.js";

const BOTH = ["v1", "v2"] as const;

export function paymentRoutes(engine: Engine) {
  return [
    defineRoute({
      method: "POST",
      path: "/payment/intent",
      versions: BOTH,
      summary: "Create a payment intent (spec §4.3)",
      description: "`external_payment_id` comes back as `external_transaction_id`. `client_secret` (extension) is returned when a client SDK collects the card (processor B, card present).",
      auth: "api_key",
      input: CreateIntentInput,
      response: CreatedIntentOut,
      run: (input, { command }) => engine.createIntent(input, command),
      present: presentCreated,
    }),
    defineRoute({
      method: "POST",
      path: "/payment/auth",
      versions: BOTH,
      summary: "Authorize a payment (spec §4.4)",
      description:
        "Asynchronous terminal: returns at once with `payment_method_requested`; poll the status read. Synchronous terminal: blocks until the shopper pays or cancels, up to 120 s (server-side; the payment completes even if the client disconnects). Stored card: the outcome. Processor B: processes the card the client SDK collected.",
      auth: "api_key",
      input: AuthorizeInput,
      response: PaymentRecordOut,
      run: (input, { command }) => engine.authorize(input, command),
      present: presentPayment,
    }),
    defineRoute({
      method: "GET",
      path: "/payment/intent/:payment_id",
      versions: ["v2"],
      summary: "Read a payment (spec §4.5)",
      description: "The full payment record; carries `last_error` and `last_error_code` after a failed auth. Poll every 0.5–1 s.",
      auth: "api_key",
      input: GetPaymentInput,
      response: PaymentRecordOut,
      run: (input) => engine.getPayment(input),
      present: presentPayment,
    }),
    defineRoute({
      method: "POST",
      path: "/payment/capture",
      versions: BOTH,
      summary: "Capture an authorized payment (spec §4.6)",
      description: "`amount` as a JSON number or string, at most `amount_capturable`.",
      auth: "api_key",
      input: CaptureInput,
      response: PaymentRecordOut,
      run: (input, { command }) => engine.capture(input, command),
      present: presentPayment,
    }),
    defineRoute({
      method: "POST",
      path: "/payment/cancel",
      versions: BOTH,
      summary: "Cancel (void) a payment before capture",
      description: "A terminal still collecting the card is stopped; an authorization is released. Status becomes `canceled`.",
      extension: true,
      auth: "api_key",
      input: CancelInput,
      response: PaymentRecordOut,
      run: (input, { command }) => engine.cancel(input, command),
      present: presentPayment,
    }),
    defineRoute({
      method: "POST",
      path: "/payment/refund",
      versions: BOTH,
      summary: "Refund a captured payment, fully (amount omitted) or partly",
      description: "Never above `amount_refundable`; the status stays the success status.",
      extension: true,
      auth: "api_key",
      input: RefundInput,
      response: PaymentRecordOut,
      run: (input, { command }) => engine.refund(input, command),
      present: presentPayment,
    }),
  ];
}
