// The follow-up policy (src/engine/policy/follow-ups.ts), given/when/then: given a payment's
// events, then what follows on its own, as the machine's rules on its states say (automatic
// capture; a synchronous terminal saving its card once captured), or nothing.
import { describe, expect, test } from "vitest";
import { FOLLOW_UPS, followUpDue } from "../../../src/engine/policy/follow-ups.js";
import { ProcessorRefused } from "../../../src/errors.js";
import { paymentAfter } from "./spec.js";
import { ev, storedCardAuthorized, storedCardIntent, terminalAuthorized, terminalCaptured } from "./events.js";

/** What the policy makes next, in its order. */
const next = (events: Parameters<typeof paymentAfter>[0]) => {
  const payment = paymentAfter(events);
  return FOLLOW_UPS.map((check) => check(payment)).filter((f) => f !== null);
};

describe("follow-ups", () => {
  test("given an automatic-capture terminal payment authorized, then its capture of everything capturable follows", () => {
    const events = terminalAuthorized("A_async", { capture_method: "automatic" });
    expect(next(events)).toEqual([{ command: "capture", attempt: ev.captureAttempted("10.00") }]);
    expect(followUpDue(paymentAfter(events))).toBe(true);
  });

  test("given a manual-capture payment authorized, then nothing follows (the merchant captures)", () => {
    expect(next(storedCardAuthorized())).toEqual([]);
    expect(followUpDue(paymentAfter(storedCardAuthorized()))).toBe(false);
  });

  test("given a synchronous terminal's payment captured for a customer that allows saving, then saving its card follows, and a processor refusal leaves the payment standing", () => {
    const [followUp, ...rest] = next(terminalCaptured("A_sync", { external_customer_id: "cus_1", allow_saving_card: true }));
    expect(rest).toEqual([]);
    expect(followUp).toMatchObject({ command: "save_card", attempt: ev.saveAttempted("cus_1") });
    expect(followUp!.tolerates?.(new ProcessorRefused("expired"))).toBe(true);
    expect(followUp!.tolerates?.(new Error("timeout"))).toBe(false);
  });

  test("given that payment's card saved already, or an asynchronous terminal, or no saving allowed, then nothing follows", () => {
    const saved = [...terminalCaptured("A_sync", { external_customer_id: "cus_1", allow_saving_card: true }), ev.saveAttempted("cus_1", "att_3"), ev.saved("cus_1", "att_3")];
    expect(next(saved)).toEqual([]);
    expect(next(terminalCaptured("A_async", { external_customer_id: "cus_1", allow_saving_card: true }))).toEqual([]);
    expect(next(terminalCaptured("A_sync", { external_customer_id: "cus_1" }))).toEqual([]);
  });

  test("given an automatic capture already in flight, then nothing more follows until it is answered", () => {
    expect(next([...terminalAuthorized("A_async", { capture_method: "automatic" }), ev.captureAttempted("10.00", "att_2")])).toEqual([]);
    expect(next(storedCardIntent("automatic"))).toEqual([]);
  });
});
