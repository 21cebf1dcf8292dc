// Cards on file (spec §2.3, §4.7).
import { z } from "zod";
import type { CustomerCardRecord } from "../../../projections/customer-cards.js";
import type { Engine } from "../../engine.js";
import { Id, SaveCardInput } from "../../inputs.js";
import { defineRoute } from "../route.js";
import { CustomerCardListOut, CustomerCardOut } from "../schemas.js";

export const ListCustomerCardsInput = z.strictObject({ external_account_id: Id, external_customer_id: Id });

export function customerCardRoutes(engine: Engine) {
  return [
    defineRoute({
      method: "POST",
      path: "/customer/card",
      versions: ["v1"],
      summary: "Save the card of a payment on file for a customer (spec §4.7)",
      description:
        "Answers with the card on file; its token is `payment_method_id`. Saving again for the same customer answers with the same card. Called from a server with the API key, or from a client (spec §4.7) without one: the client then sends the payment's `client_secret` in the body (an extension field).",
      auth: "api_key_or_client_secret",
      input: SaveCardInput,
      response: () => CustomerCardOut,
      run: (input, { command }) => engine.saveCard(input, command),
      present: (card: CustomerCardRecord) => card,
      // saving again for the same customer appends nothing and answers with the saved card
      recordWithEvents: false,
    }),
    defineRoute({
      method: "GET",
      path: "/customer/card",
      versions: ["v1"],
      summary: "List a customer's cards on file, found by the external customer id",
      extension: true,
      auth: "api_key",
      input: ListCustomerCardsInput,
      response: () => CustomerCardListOut,
      run: (input) => engine.listCustomerCards(input.external_account_id, input.external_customer_id),
      present: (data: CustomerCardRecord[]) => ({ data }),
    }),
  ];
}
