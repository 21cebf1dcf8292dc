// Processor B client SDK (spec §4.8): collect a card on a reader or a card form, given/when/then.
// Reading the card moves no money: the card the processor read is recorded, no attempt.
import { describe, test } from "vitest";
import { decideCollect } from "../../../src/engine/deciders/collect-payment-method.js";
import { decider } from "./spec.js";
import { CARD, CARD_NOT_PRESENT, clientSdkIntent, collectedOnReader, ev, processedByCollect, terminal } from "./events.js";

const collect = decider(decideCollect);
const secret = { client_secret: "pay_1_secret_x" };
const reader = terminal("B_reader", "rdr_1");

describe("collect decides", () => {
  test("given a card-present intent, when a reader collects, then the decider needs the reader looked up, then the card read", () => {
    const intent = clientSdkIntent({ payment_method_types: "card_present" });
    collect.given(intent).when({ ...secret, terminal_id: "rdr_1" }).thenNeeds("terminal");
    collect.given(intent).when({ ...secret, terminal_id: "rdr_1" }, { terminal: reader }).thenNeeds("card");
  });

  test("given a card-present intent, when a reader read the card, then the card is recorded with its reader", () => {
    collect.given(clientSdkIntent({ payment_method_types: "card_present" })).when({ ...secret, terminal_id: "rdr_1" }, { terminal: reader, card: CARD }).thenAppends([ev.collected("rdr_1", CARD)]);
  });

  test("given a processor B card-not-present intent, when a card form collects, then the card is recorded with no reader", () => {
    collect.given(clientSdkIntent()).when(secret, { card: CARD_NOT_PRESENT }).thenAppends([ev.collected(null, CARD_NOT_PRESENT)]);
  });
});

describe("collect refuses", () => {
  test("given a card-present intent, when a processor A terminal is named as the reader, then 400 parameter_invalid", () => {
    collect
      .given(clientSdkIntent({ payment_method_types: "card_present" }))
      .when({ ...secret, terminal_id: "tml_1" }, { terminal: terminal("A_sync") })
      .thenRefuses("parameter_invalid", { status: 400, param: "terminal_id", message: "tml_1 is not a processor B reader" });
  });

  test("given a card collected already, when another card is collected, then 409 before the card is read", () => {
    collect
      .given(collectedOnReader())
      .when({ ...secret, terminal_id: "rdr_1" }, { terminal: reader })
      .thenRefuses("payment_intent_unexpected_state", { status: 409, current_status: "payment_method_requested" });
  });

  test("given a card form processed already, when a card is collected again, then 409 in requires_capture", () => {
    collect.given(processedByCollect()).when(secret).thenRefuses("payment_intent_unexpected_state", { current_status: "requires_capture", allowed_next_steps: ["capture", "cancel"] });
  });

  test("given a card-present intent, when a card form (no reader) collects, then 400 naming terminal_id, before the card is read: a card-present card is read on a reader", () => {
    collect.given(clientSdkIntent({ payment_method_types: "card_present" })).when(secret).thenRefuses("parameter_missing", { status: 400, param: "terminal_id", message: "read on a processor B reader" });
  });

  test("given a card-not-present intent, when a reader collects, then 400 naming terminal_id, before the reader is looked up: its card is collected on the card form", () => {
    collect.given(clientSdkIntent({ payment_method_types: "card" })).when({ ...secret, terminal_id: "rdr_1" }).thenRefuses("parameter_unexpected", { status: 400, param: "terminal_id", message: "collected on the card form" });
  });
});
