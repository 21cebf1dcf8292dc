// Spec §2.3, §4.7: save the payment's card on file for a customer, given/when/then.
import { describe, test } from "vitest";
import { decideSaveCard } from "../../../src/engine/deciders/save-card.js";
import { decider } from "./spec.js";
import { CARD_NOT_PRESENT, cardPresentIntent, collectingOnTerminal, created, ev, processedByCollect, ref, storedCardAuthorized, storedCardCaptured, storedCardIntent, terminalAuthorized, terminalCaptured } from "./events.js";

const saveCard = decider(decideSaveCard);
const save = (external_customer_id: string) => ({ ...ref, external_customer_id });

describe("save card decides", () => {
  test("given a processor B card form authorized that allows saving, when its card is saved before capture, then the save is attempted for the customer", () => {
    saveCard.given(processedByCollect({ allow_saving_card: true })).when(save("cus_1")).thenAttempts(ev.saveAttempted("cus_1"));
  });

  test("given a synchronous terminal's payment captured, when its card is saved for the intent's customer, then the save is attempted", () => {
    saveCard.given(terminalCaptured("A_sync", { external_customer_id: "cus_1" })).when(save("cus_1")).thenAttempts(ev.saveAttempted("cus_1"));
  });

  test("given the card saved for this customer already, when it is saved again for them, then the command answers the card already saved", () => {
    const saved = [...processedByCollect({ allow_saving_card: true }), ev.saveAttempted("cus_1", "att_2"), ev.saved("cus_1", "att_2")];
    saveCard.given(saved).when(save("cus_1")).thenUnchanged();
  });

  test("given a captured payment that charged a card on file, when its card is saved for its customer, then the card on file is asked for, and the command answers it when it was saved here for that customer", () => {
    saveCard.given(storedCardCaptured()).when(save("cus_1")).thenNeeds("card_on_file");
    const onFile = { payment_method_id: "pm_1", external_account_id: "acct_1", external_customer_id: "cus_1", brand: "visa", last_4: "4242", exp_month: "12", exp_year: 2030, cardholder_name: null, funding: "credit", payment_id: "pi_saver", date_created: "2026-01-01T00:00:00.000+00:00" };
    saveCard.given(storedCardCaptured()).when(save("cus_1"), { cardOnFile: onFile }).thenUnchanged();
    // the shopper's no (allow_saving_card false) holds here too: 409 saying so
    saveCard
      .given([created({ payment_method_id: "pm_1", stored_card: CARD_NOT_PRESENT, external_customer_id: "cus_1", capture_method: "manual", allow_saving_card: false }), ...storedCardCaptured().slice(1)])
      .when(save("cus_1"), { cardOnFile: onFile })
      .thenRefuses("payment_intent_unexpected_state", { current_status: "succeeded", message: "it was created with allow_saving_card false" });
    // a processor's token never saved here (a sandbox test card): on file already, 409
    saveCard.given(storedCardCaptured()).when(save("cus_1"), { cardOnFile: null }).thenRefuses("payment_intent_unexpected_state", { current_status: "succeeded", message: "it charges the card on file pm_1, which is saved already" });
  });
});

describe("save card refuses", () => {
  test("given the card saved for one customer, when it is saved for another, then 409 naming the customer it is saved for", () => {
    const saved = [...processedByCollect({ allow_saving_card: true }), ev.saveAttempted("cus_1", "att_2"), ev.saved("cus_1", "att_2")];
    saveCard.given(saved).when(save("cus_2")).thenRefuses("payment_intent_unexpected_state", { status: 409, message: "its card is saved already, for customer cus_1" });
  });

  test("given an asynchronous terminal's payment captured, when its card is saved, then 409 naming the terminal type", () => {
    saveCard
      .given(terminalCaptured("A_async", { external_customer_id: "cus_1" }))
      .when(save("cus_1"))
      .thenRefuses("payment_intent_unexpected_state", { current_status: "succeeded", message: "the asynchronous terminal type does not support card on file" });
  });

  test("given a payment that charged a card on file, when its card is saved for another customer or before capture, then 409 (it is on file already)", () => {
    saveCard.given(storedCardCaptured()).when(save("cus_2")).thenRefuses("payment_intent_unexpected_state", { current_status: "succeeded", message: "it charges the card on file pm_1, which is saved already" });
    saveCard.given(storedCardAuthorized()).when(save("cus_1")).thenRefuses("payment_intent_unexpected_state", { current_status: "requires_capture", message: "it charges the card on file pm_1, which is saved already" });
  });

  test("given a payment canceled, when its card is saved, then 409 saying it was canceled, before any other reason (a stored card's, a terminal's)", () => {
    const canceled = (events: ReturnType<typeof storedCardAuthorized>) => [...events, ev.voidAttempted(null, "att_9"), ev.canceled(null, "att_9")];
    for (const given of [canceled(storedCardAuthorized()), canceled(terminalAuthorized("A_sync", { capture_method: "manual", external_customer_id: "cus_1" }))]) {
      saveCard.given(given).when(save("cus_1")).thenRefuses("payment_intent_unexpected_state", { current_status: "canceled", message: "it was canceled: a card is saved only from a captured payment (spec §2.3)" });
    }
  });

  test("given a synchronous terminal's payment captured that was created with neither allow_saving_card nor a customer, when its card is saved, then 409 naming both", () => {
    saveCard
      .given(terminalCaptured("A_sync"))
      .when(save("cus_1"))
      .thenRefuses("payment_intent_unexpected_state", { current_status: "succeeded", message: "created without allow_saving_card or external_customer_id" });
  });

  test("given a synchronous terminal's payment authorized for manual capture, when its card is saved, then 409 saying to capture first (spec §4.6)", () => {
    saveCard
      .given(terminalAuthorized("A_sync", { capture_method: "manual", external_customer_id: "cus_1" }))
      .when(save("cus_1"))
      .thenRefuses("payment_intent_unexpected_state", { current_status: "requires_capture", message: "capture it first: a card-present card can be saved once the payment is captured (spec §4.6)" });
  });

  test("given a processor B card form authorized for manual capture without allow_saving_card, when its card is saved, then 409 saying saving before capture needs allow_saving_card true (spec §4.8)", () => {
    saveCard
      .given(processedByCollect({ external_customer_id: "cus_1" }))
      .when(save("cus_1"))
      .thenRefuses("payment_intent_unexpected_state", { current_status: "requires_capture", message: "saving before capture needs an intent created with allow_saving_card true (spec §4.8)" });
  });

  test("given a payment created for customer cus_1, when its card is saved for cus_2, then 400 naming external_customer_id and the payment's customer", () => {
    saveCard.given(terminalCaptured("A_sync", { external_customer_id: "cus_1" })).when(save("cus_2")).thenRefuses("parameter_invalid", { status: 400, param: "external_customer_id", message: "was created for customer cus_1" });
  });

  test("given an intent with no card yet, when its card is saved, then 409", () => {
    saveCard.given(storedCardIntent()).when(save("cus_1")).thenRefuses("payment_intent_unexpected_state", { current_status: "requires_payment_method" });
    saveCard.given(cardPresentIntent({ external_customer_id: "cus_1" })).when(save("cus_1")).thenRefuses("payment_intent_unexpected_state", { message: "no card has been collected for it yet" });
  });

  test("given a terminal payment whose attempt was declined, when its card is saved, then 409 saying the attempt was not approved (not that no card was collected)", () => {
    saveCard
      .given([...collectingOnTerminal("A_sync", { external_customer_id: "cus_1", allow_saving_card: true }), ev.failed("ONLINE_DECLINED")])
      .when(save("cus_1"))
      .thenRefuses("payment_intent_unexpected_state", { current_status: "error", message: "its last attempt was not approved (failed): a card is saved from a captured payment (spec §2.3)" });
  });

  test("given a save in flight, when the card is saved again, then 409 attempt_in_flight", () => {
    saveCard.given([...processedByCollect({ allow_saving_card: true }), ev.saveAttempted("cus_1", "att_2")]).when(save("cus_1")).thenRefuses("attempt_in_flight", { message: "CardSaveAttempted att_2" });
  });
});
