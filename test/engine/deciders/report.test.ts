// What a processor reports on its own (a terminal's outcome, a capture settled), given/when/then:
// events that answer no attempt, taken only while the payment awaits the processor.
import { describe, test } from "vitest";
import { decideReport } from "../../../src/engine/deciders/report.js";
import { decider } from "./spec.js";
import { authorization, collectingOnTerminal, ev, storedCardAuthorized, storedCardIntent, terminalAuthorized } from "./events.js";

const report = decider(decideReport);

describe("a processor's report decides", () => {
  test("given a terminal collecting, when the processor reports an authorization, then it is recorded (answering no attempt)", () => {
    report.given(collectingOnTerminal()).when({ kind: "authorized", authorization: authorization() }).thenAppends([ev.authorized()]);
  });

  test("given a terminal collecting, when the processor reports a decline, then the failure is recorded with its code", () => {
    report
      .given(collectingOnTerminal())
      .when({ kind: "failed", last_error: "The processor declined the card", last_error_code: "ONLINE_DECLINED" })
      .thenAppends([{ type: "AuthorizationFailed", version: 1, data: { last_error: "The processor declined the card", last_error_code: "ONLINE_DECLINED" } }]);
  });

  test("given a capture requested (capture_requested), when the processor reports it settled, then the capture is recorded for the amount settled", () => {
    const requested = [...storedCardAuthorized(), ev.captureAttempted("6.00", "att_2"), ev.captureRequested("6.00", "att_2")];
    report.given(requested).when({ kind: "capture_settled", amount: "6.00" }).thenAppends([ev.captured("6.00")]);
  });
});

describe("a processor's report is refused", () => {
  test("given a payment that awaits no processor (requires_capture), when an outcome is reported, then 409 saying so", () => {
    report
      .given(terminalAuthorized())
      .when({ kind: "authorized", authorization: authorization() })
      .thenRefuses("payment_intent_unexpected_state", { status: 409, current_status: "requires_capture", message: "the payment awaits no processor outcome" });
  });

  test("given an intent not started, when a settlement is reported, then 409", () => {
    report.given(storedCardIntent()).when({ kind: "capture_settled", amount: "10.00" }).thenRefuses("payment_intent_unexpected_state", { current_status: "requires_payment_method" });
  });
});
