// Who collects a payment's card (spec §1, §4.8), one rule for the machine's guard
// (collectsWithClientSdk, ./payment.ts) and for the intent's creation (which issues a client secret
// to the processor B client SDK only when it collects): a card-present payment's card is read on a
// reader; a card-not-present one is collected on the SDK's card form when the account's processor
// is B and no card on file is charged.
type Intent = { payment_method_types: string; processor: string; payment_method_id?: string | null };

export const collectsOnClient = (intent: Intent): boolean =>
  intent.payment_method_types === "card_present" || (intent.processor === "B" && (intent.payment_method_id ?? null) === null);

/**
 * Whether collecting also processes the payment: on a card form (card not present: the spec's
 * flow is collect, then save the card) and with automatic capture (the spec's reader flow is
 * collect, then save the card once captured). A reader with manual capture is collected, then
 * processed (the spec's flow names both steps).
 */
export const collectProcesses = (intent: { payment_method_types: string; capture_method: string }): boolean =>
  intent.payment_method_types === "card" || intent.capture_method === "automatic";
