// Spec §4.6: capture, all or part of the authorization (the rest is released), given/when/then.
import { describe, test } from "vitest";
import { decideCapture } from "../../../src/engine/deciders/capture.js";
import { decider } from "./spec.js";
import { ev, ref, storedCardAuthorized, storedCardCaptured, storedCardIntent, terminalAuthorized } from "./events.js";

const capture = decider(decideCapture);

describe("capture decides", () => {
  test("given an authorization of 10.00, when 4 is captured, then a capture of 4.00 is attempted (written with the currency's minor units)", () => {
    capture.given(storedCardAuthorized()).when({ ...ref, amount: "4" }).thenAttempts(ev.captureAttempted("4.00"));
  });

  test("given an authorization of 10.00, when all of it is captured (a JSON number), then a capture of 10.00 is attempted", () => {
    capture.given(storedCardAuthorized()).when({ ...ref, amount: 10 }).thenAttempts(ev.captureAttempted("10.00"));
  });

  test("given a terminal's authorization, when it is captured, then the capture is attempted as for a card on file", () => {
    capture.given(terminalAuthorized()).when({ ...ref, amount: "10.00" }).thenAttempts(ev.captureAttempted("10.00"));
  });
});

describe("capture refuses", () => {
  test("given an authorization of 10.00, when 10.01 is captured, then 400 amount_too_large names amount_capturable", () => {
    capture.given(storedCardAuthorized()).when({ ...ref, amount: "10.01" }).thenRefuses("amount_too_large", { status: 400, param: "amount", message: "amount: 10.01 exceeds amount_capturable 10.00" });
  });

  test("given an authorization, when the amount has more decimals than the currency, then 400 amount_invalid", () => {
    capture.given(storedCardAuthorized()).when({ ...ref, amount: "1.001" }).thenRefuses("amount_invalid", { status: 400, param: "amount", message: "decimal place" });
  });

  test("given an authorization, when the amount is zero or not a number, then 400 amount_invalid", () => {
    capture.given(storedCardAuthorized()).when({ ...ref, amount: "0" }).thenRefuses("amount_invalid", { message: "must be greater than 0" });
    capture.given(storedCardAuthorized()).when({ ...ref, amount: "1e3" }).thenRefuses("amount_invalid", { message: "not a decimal number" });
  });

  test("given an intent not yet authorized, when it is captured, then 409: the machine names the status and what is allowed", () => {
    capture
      .given(storedCardIntent())
      .when({ ...ref, amount: "10.00" })
      .thenRefuses("payment_intent_unexpected_state", { status: 409, current_status: "requires_payment_method", allowed_next_steps: ["authorize", "cancel"] });
  });

  test("given a payment captured already, when it is captured again, then 409 in succeeded (refund is what remains)", () => {
    capture
      .given(storedCardCaptured())
      .when({ ...ref, amount: "1.00" })
      .thenRefuses("payment_intent_unexpected_state", { current_status: "succeeded", allowed_next_steps: ["refund"] });
  });

  test("given a capture in flight, when another capture comes, then 409 attempt_in_flight names the open attempt", () => {
    capture
      .given([...storedCardAuthorized(), ev.captureAttempted("10.00", "att_9")])
      .when({ ...ref, amount: "1.00" })
      .thenRefuses("attempt_in_flight", { status: 409, message: "CaptureAttempted att_9" });
  });
});
