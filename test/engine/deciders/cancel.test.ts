// Extension: cancel before capture, given/when/then. A held authorization is released (a void: a
// processor call); a terminal still collecting is stopped; an intent with nothing held is canceled.
import { describe, test } from "vitest";
import { decideCancel } from "../../../src/engine/deciders/cancel.js";
import { decider } from "./spec.js";
import { collectingOnTerminal, ev, ref, storedCardAuthorized, storedCardCaptured, storedCardIntent } from "./events.js";

const cancel = decider(decideCancel);

describe("cancel decides", () => {
  test("given an authorization held (requires_capture), when it is canceled, then a void is attempted with the reason", () => {
    cancel.given(storedCardAuthorized()).when({ ...ref, cancellation_reason: "requested_by_customer" }).thenAttempts(ev.voidAttempted("requested_by_customer"));
  });

  test("given an intent with nothing authorized, when it is canceled without a reason, then it is canceled with no processor call", () => {
    cancel.given(storedCardIntent()).when(ref).thenAppends([ev.canceled(null)]);
  });

  test("given a terminal collecting the card, when it is canceled, then the terminal is stopped first and the payment canceled (no money moved)", () => {
    cancel.given(collectingOnTerminal()).when({ ...ref, cancellation_reason: "abandoned" }).thenAppends([ev.canceled("abandoned")], { stopTerminal: "tml_1" });
  });
});

describe("cancel refuses", () => {
  test("given a payment captured, when it is canceled, then 409 (a refund gives money back)", () => {
    cancel.given(storedCardCaptured()).when(ref).thenRefuses("payment_intent_unexpected_state", { status: 409, current_status: "succeeded", allowed_next_steps: ["refund"] });
  });

  test("given a payment canceled, when it is canceled again, then 409 with no step allowed", () => {
    cancel.given([...storedCardIntent(), ev.canceled()]).when(ref).thenRefuses("payment_intent_unexpected_state", { current_status: "canceled", allowed_next_steps: [] });
  });

  test("given a capture in flight, when it is canceled, then 409 attempt_in_flight (no void races the capture)", () => {
    cancel.given([...storedCardAuthorized(), ev.captureAttempted("10.00", "att_2")]).when(ref).thenRefuses("attempt_in_flight", { message: "CaptureAttempted att_2" });
  });
});
