// Extension: the processor B client SDK (a reader, a card form) collecting the card and processing
// the payment, authorised by the intent's client secret. Served in every mode: the card goes to
// the processor B behind the engine (the simulator in the sandbox, the adapter in production).
import type { Engine } from "../../engine.js";
import { CollectPaymentMethodInput, ProcessPaymentInput } from "../../inputs.js";
import { presentToClient } from "../../present/api-versions.js";
import { defineRoute } from "../route.js";
import { ClientIntentOut } from "../schemas.js";

export function clientSdkRoutes(engine: Engine) {
  return [
    defineRoute({
      method: "POST",
      path: "/v2/sdk/payment-method",
      summary: "Processor B client SDK: collect the card for an intent, authorised by its client secret",
      description:
        "Called by the client (reader or card form), not the merchant server: no API key, the intent's `client_secret` authorises it. On a card form (card not present, no `terminal_id`) or with automatic capture it also processes the payment: the answer is `requires_capture`, `succeeded`, `capture_requested` (a capture settled later), `error` (a decline) or `requires_payment_method` with `last_error_code` (the collection ended: cancel, timeout). A reader's payment with manual capture is then processed with process-payment (or the auth call).",
      extension: true,
      auth: "client_secret",
      input: CollectPaymentMethodInput,
      response: () => ClientIntentOut,
      run: (input, { command }) => engine.collectPaymentMethod(input, command),
      present: presentToClient,
    }),
    defineRoute({
      method: "POST",
      path: "/v2/sdk/process-payment",
      summary: "Processor B client SDK: process the payment whose card it collected, authorised by the client secret",
      description: "The same as the server calling the auth endpoint with the `payment_id` after the SDK collected the card. After a collect that already processed the payment (card form, or automatic capture) it answers that payment and acts no second time.",
      extension: true,
      auth: "client_secret",
      input: ProcessPaymentInput,
      response: () => ClientIntentOut,
      run: (input, { command }) => engine.processPayment(input, command),
      present: presentToClient,
    }),
  ];
}
