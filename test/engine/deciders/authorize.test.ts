// Spec §4.4, §4.8: authorize, given/when/then. A card on file is charged; a processor A terminal
// starts collecting; a card the processor B client SDK collected is processed.
import { describe, test } from "vitest";
import { decideAuthorize, decideShopperTimeout } from "../../../src/engine/deciders/authorize.js";
import { decider } from "./spec.js";
import {
  CARD,
  cardPresentIntent,
  clientSdkIntent,
  collectedOnReader,
  collectingOnTerminal,
  ev,
  processedByCollect,
  ref,
  storedCardAuthorized,
  storedCardIntent,
  terminal,
  terminalAuthorized,
} from "./events.js";

const authorize = decider(decideAuthorize);
const shopperTimeout = decider(decideShopperTimeout);

describe("authorize decides", () => {
  test("given a stored-card intent, when it is authorized, then the card on file is charged for the intent's amount", () => {
    authorize.given(storedCardIntent("manual", "25.50")).when(ref).thenAttempts(ev.authAttempted("25.50"));
  });

  test("given a stored-card charge the processor declined (retryable), when it is authorized again, then it is charged again", () => {
    authorize.given([...storedCardIntent(), ev.authAttempted("10.00", "att_1"), ev.failed("USER_TIMEOUT", "att_1")]).when(ref).thenAttempts(ev.authAttempted());
  });

  test("given a stored-card intent, when it is authorized with an external_payment_id (spec §4.4), then the reference goes ahead of the charge's attempt; the same reference again adds nothing", () => {
    const reference = { type: "TransactionReferenceGiven", version: 2, data: { external_transaction_id: "pos-7" } } as const;
    authorize.given(storedCardIntent()).when({ ...ref, external_payment_id: "pos-7" }).thenAttempts(ev.authAttempted(), { before: [reference] });
    const failed = [...storedCardIntent(), reference, ev.authAttempted("10.00", "att_1"), ev.failed("USER_TIMEOUT", "att_1")];
    authorize.given(failed).when({ ...ref, external_payment_id: "pos-7" }).thenAttempts(ev.authAttempted());
  });

  test("given a card-present intent, when it is authorized on a terminal with an external_payment_id, then the reference goes ahead of the terminal's attempt; refused, it records nothing", () => {
    const reference = { type: "TransactionReferenceGiven", version: 2, data: { external_transaction_id: 8 } } as const;
    authorize.given(cardPresentIntent()).when({ ...ref, terminal_id: "tml_1", external_payment_id: 8 }, { terminal: terminal("A_async") }).thenAttempts(ev.terminalAttempted("A_async"), { terminal: terminal("A_async"), before: [reference] });
    authorize.given(terminalAuthorized()).when({ ...ref, terminal_id: "tml_1", external_payment_id: 8 }, { terminal: terminal("A_async") }).thenRefuses("payment_intent_unexpected_state");
  });

  test("given a card-present intent, when it is authorized on a terminal the handler has not looked up yet, then the decider needs the terminal", () => {
    authorize.given(cardPresentIntent()).when({ ...ref, terminal_id: "tml_1" }).thenNeeds("terminal");
  });

  test("given a card-present intent, when it is authorized on a processor A terminal, then the terminal is asked to start collecting", () => {
    for (const type of ["A_async", "A_sync"] as const) {
      authorize.given(cardPresentIntent()).when({ ...ref, terminal_id: "tml_1" }, { terminal: terminal(type) }).thenAttempts(ev.terminalAttempted(type), { terminal: terminal(type) });
    }
  });

  test("given a terminal collection that failed (error), when it is authorized again, then the terminal starts again", () => {
    authorize
      .given([...collectingOnTerminal(), ev.failed("ONLINE_DECLINED")])
      .when({ ...ref, terminal_id: "tml_1" }, { terminal: terminal("A_sync") })
      .thenAttempts(ev.terminalAttempted("A_sync"), { terminal: terminal("A_sync") });
  });

  test("given a card the processor B client SDK collected on a reader (manual capture), when it is authorized, then the collected card is charged", () => {
    authorize.given(collectedOnReader()).when(ref).thenAttempts(ev.authAttempted());
    // naming the reader it was collected on, too
    authorize.given(collectedOnReader()).when({ ...ref, terminal_id: "rdr_1" }).thenAttempts(ev.authAttempted());
  });
});

describe("authorize refuses", () => {
  test("given a stored-card intent, when a terminal_id is sent, then 400 parameter_unexpected", () => {
    authorize.given(storedCardIntent()).when({ ...ref, terminal_id: "tml_1" }).thenRefuses("parameter_unexpected", { status: 400, param: "terminal_id" });
  });

  test("given a stored-card payment authorized already, when it is authorized again, then 409 in requires_capture", () => {
    authorize
      .given(storedCardAuthorized())
      .when(ref)
      .thenRefuses("payment_intent_unexpected_state", { status: 409, current_status: "requires_capture", allowed_next_steps: ["capture", "cancel"] });
  });

  test("given a stored-card charge in flight, when it is authorized again, then 409 attempt_in_flight", () => {
    authorize.given([...storedCardIntent(), ev.authAttempted("10.00", "att_1")]).when(ref).thenRefuses("attempt_in_flight", { message: "AuthorizationAttempted att_1" });
  });

  test("given a card-present intent, when no terminal_id is sent, then 400 parameter_missing", () => {
    authorize.given(cardPresentIntent()).when(ref).thenRefuses("parameter_missing", { status: 400, param: "terminal_id" });
  });

  test("given a card-present intent, when it is authorized on a processor B reader, then 400: a reader's card is collected by the client SDK", () => {
    authorize
      .given(cardPresentIntent())
      .when({ ...ref, terminal_id: "rdr_1" }, { terminal: terminal("B_reader", "rdr_1") })
      .thenRefuses("terminal_collects_with_client_sdk", { status: 400, param: "terminal_id", message: "rdr_1 is a processor B reader" });
  });

  test("given a card the client SDK collected on a reader, when it is authorized naming another terminal, then 400 naming the reader (an unknown one is looked up: 404)", () => {
    authorize.given(collectedOnReader()).when({ ...ref, terminal_id: "rdr_2" }).thenNeeds("terminal");
    authorize
      .given(collectedOnReader())
      .when({ ...ref, terminal_id: "rdr_2" }, { terminal: terminal("B_reader", "rdr_2") })
      .thenRefuses("parameter_invalid", { status: 400, param: "terminal_id", message: "the card was collected on rdr_1; authorize with that terminal_id, or no terminal_id" });
  });

  test("given a payment past authorization, when it is authorized on a processor B reader, then 409 in its status, not 400 about the reader", () => {
    const captured = [...collectedOnReader(), ev.authAttempted("10.00", "att_1"), ev.authorized("10.00", "att_1", CARD)];
    authorize
      .given(captured)
      .when({ ...ref, terminal_id: "rdr_1" }, { terminal: terminal("B_reader", "rdr_1") })
      .thenRefuses("payment_intent_unexpected_state", { current_status: "requires_capture", message: "a reader's payment is authorized once, after the client SDK collected its card (payment_method_requested)" });
    // and with no terminal_id at all (a probe: 400 parameter_missing for a payment the SDK had processed)
    authorize.given(captured).when(ref).thenRefuses("payment_intent_unexpected_state", { current_status: "requires_capture" });
  });

  test("given a terminal collecting the card, when it is authorized again, then 409 before the terminal is disturbed", () => {
    authorize
      .given(collectingOnTerminal())
      .when({ ...ref, terminal_id: "tml_1" }, { terminal: terminal("A_async") })
      .thenRefuses("payment_intent_unexpected_state", { current_status: "payment_method_requested", message: "a terminal authorization is allowed from requires_payment_method or error" });
  });

  test("given a terminal payment authorized, when it is authorized again, then 409 in requires_capture", () => {
    authorize.given(terminalAuthorized()).when({ ...ref, terminal_id: "tml_1" }, { terminal: terminal("A_async") }).thenRefuses("payment_intent_unexpected_state", { current_status: "requires_capture" });
  });

  test("given a processor B card-not-present intent with no card collected, when it is authorized, then 409: the client SDK collects first", () => {
    authorize.given(clientSdkIntent()).when(ref).thenRefuses("payment_intent_unexpected_state", { current_status: "requires_payment_method", message: "collected by the processor B client SDK first" });
  });

  test("given a processor A card-not-present intent with no card on file, when it is authorized, then 409 naming the card on file, not an SDK it has none of", () => {
    authorize.given(clientSdkIntent({ processor: "A" })).when(ref).thenRefuses("payment_intent_unexpected_state", { current_status: "requires_payment_method", message: "from a card on file (payment_method_id, given at creation), which this intent has none of" });
  });

  test("given a card form the collect processed already, when it is authorized, then 409 saying the collect processed it", () => {
    authorize.given(processedByCollect()).when(ref).thenRefuses("payment_intent_unexpected_state", { current_status: "requires_capture", message: "collecting the payment method already processed the payment" });
  });

  test("given a card present the collect processed on a reader (automatic capture), when it is authorized on any terminal or none, then the same 409", () => {
    const processedOnReader = [...collectedOnReader({ capture_method: "automatic" }), ev.authAttempted("10.00", "att_1"), ev.authorized("10.00", "att_1", CARD)];
    for (const [input, context] of [[ref, {}], [{ ...ref, terminal_id: "rdr_1" }, { terminal: terminal("B_reader") }], [{ ...ref, terminal_id: "tml_1" }, { terminal: terminal("A_async") }]] as const) {
      authorize.given(processedOnReader).when(input, context).thenRefuses("payment_intent_unexpected_state", { current_status: "requires_capture", message: "collecting the payment method already processed the payment" });
    }
  });
});

describe("a synchronous terminal's deadline passes (spec §4.4)", () => {
  test("given the terminal still collecting, when the deadline passes, then it is stopped and the shopper timed out (USER_TIMEOUT)", () => {
    shopperTimeout.given(collectingOnTerminal("A_sync")).when({ terminal_id: "tml_1" }).thenAppends([ev.timedOut()], { stopTerminal: "tml_1" });
  });

  test("given the terminal reported meanwhile (authorized), when the deadline passes, then nothing changes", () => {
    shopperTimeout.given(terminalAuthorized("A_sync")).when({ terminal_id: "tml_1" }).thenUnchanged();
  });
});
