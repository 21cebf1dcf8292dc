// Extension: a full (amount omitted) or partial refund, never above amount_refundable, given/when/then.
import { describe, test } from "vitest";
import { decideRefund } from "../../../src/engine/deciders/refund.js";
import { decider } from "./spec.js";
import { CARD_NOT_PRESENT, created, ev, ref, storedCardAuthorized, storedCardCaptured } from "./events.js";

const refund = decider(decideRefund);

describe("refund decides", () => {
  test("given a payment captured for 10.00, when it is refunded without an amount, then all of it is refunded", () => {
    refund.given(storedCardCaptured()).when(ref).thenAttempts(ev.refundAttempted("10.00"));
  });

  test("given a payment captured for 10.00, when 4 is refunded with a reason, then 4.00 is refunded with it", () => {
    refund.given(storedCardCaptured()).when({ ...ref, amount: 4, reason: "damaged" }).thenAttempts(ev.refundAttempted("4.00", "damaged"));
  });

  test("given 4.00 of 10.00 refunded already, when it is refunded without an amount, then the 6.00 left is refunded", () => {
    refund.given([...storedCardCaptured(), ev.refundAttempted("4.00", null, "att_3"), ev.refunded("4.00", "att_3")]).when(ref).thenAttempts(ev.refundAttempted("6.00"));
  });

  test("given a JPY payment (no minor units), when 500 is refunded, then 500 is refunded", () => {
    const jpy = [
      created({ currency: "JPY", amount: "1000", payment_method_id: "pm_1", stored_card: CARD_NOT_PRESENT, external_customer_id: "cus_1" }),
      ev.authAttempted("1000", "att_1"),
      ev.authorized("1000", "att_1", CARD_NOT_PRESENT),
      ev.captureAttempted("1000", "att_2"),
      ev.captured("1000", "att_2"),
    ];
    refund.given(jpy).when({ ...ref, amount: "500" }).thenAttempts(ev.refundAttempted("500"));
  });
});

describe("refund refuses", () => {
  test("given 4.00 of 10.00 refunded already, when 6.01 is refunded, then 400 amount_too_large names amount_refundable", () => {
    refund
      .given([...storedCardCaptured(), ev.refundAttempted("4.00", null, "att_3"), ev.refunded("4.00", "att_3")])
      .when({ ...ref, amount: "6.01" })
      .thenRefuses("amount_too_large", { status: 400, param: "amount", message: "amount: 6.01 exceeds amount_refundable 6.00" });
  });

  test("given a captured payment, when the amount is not a valid amount of its currency, then 400 amount_invalid", () => {
    refund.given(storedCardCaptured()).when({ ...ref, amount: "0.001" }).thenRefuses("amount_invalid", { param: "amount" });
    refund.given(storedCardCaptured()).when({ ...ref, amount: "-1" }).thenRefuses("amount_invalid", { param: "amount" });
  });

  test("given a payment authorized but not captured, when it is refunded, then 409 (cancel releases it)", () => {
    refund.given(storedCardAuthorized()).when(ref).thenRefuses("payment_intent_unexpected_state", { status: 409, current_status: "requires_capture", allowed_next_steps: ["capture", "cancel"] });
  });

  test("given a payment refunded in full, when it is refunded again, then 409 with no step allowed, saying nothing is left", () => {
    const refunded = [...storedCardCaptured(), ev.refundAttempted("10.00", null, "att_3"), ev.refunded("10.00", "att_3")];
    for (const input of [ref, { ...ref, amount: "0.01" }]) {
      refund.given(refunded).when(input).thenRefuses("payment_intent_unexpected_state", {
        current_status: "succeeded",
        allowed_next_steps: [],
        message: "does not allow refund (fully refunded: amount_refundable 0.00); allowed next steps: none",
      });
    }
  });

  test("given a refund in flight, when another refund comes, then 409 attempt_in_flight (no refund races another)", () => {
    refund.given([...storedCardCaptured(), ev.refundAttempted("1.00", null, "att_3")]).when({ ...ref, amount: "1.00" }).thenRefuses("attempt_in_flight", { message: "RefundAttempted att_3" });
  });
});
