// Processor B client SDK (spec §4.8): process the payment whose card the SDK collected, given/when/then.
import { describe, test } from "vitest";
import { decideProcessPayment } from "../../../src/engine/deciders/process-payment.js";
import { decider } from "./spec.js";
import { clientSdkIntent, collectedOnReader, ev, processedByCollect } from "./events.js";

const processPayment = decider(decideProcessPayment);
const secret = { client_secret: "pay_1_secret_x" };

describe("process payment decides", () => {
  test("given a card a reader collected (manual capture), when the payment is processed, then the collected card is charged", () => {
    processPayment.given(collectedOnReader()).when(secret).thenAttempts(ev.authAttempted());
  });

  test("given a card form the collect processed already, when it is processed again, then the payment is answered as it stands (no second charge)", () => {
    processPayment.given(processedByCollect()).when(secret).thenUnchanged();
  });

  test("given a reader collected with automatic capture, processed and captured by the collect, when processed again, then nothing changes", () => {
    const collectedAndCaptured = [...collectedOnReader({ capture_method: "automatic" }), ev.authAttempted("10.00", "att_1"), ev.authorized("10.00", "att_1"), ev.captureAttempted("10.00", "att_2"), ev.captured("10.00", "att_2")];
    processPayment.given(collectedAndCaptured).when(secret).thenUnchanged();
  });
});

describe("process payment refuses", () => {
  test("given no card collected, when the payment is processed, then 409: the client SDK collects first", () => {
    processPayment.given(clientSdkIntent()).when(secret).thenRefuses("payment_intent_unexpected_state", { status: 409, current_status: "requires_payment_method", message: "after collecting its payment method" });
  });

  test("given the charge of the collected card in flight, when it is processed again, then 409 attempt_in_flight", () => {
    processPayment.given([...collectedOnReader(), ev.authAttempted("10.00", "att_1")]).when(secret).thenRefuses("attempt_in_flight", { message: "AuthorizationAttempted att_1" });
  });
});
