// The reconciler's rule (src/engine/deciders/resolve-open.ts), given/when/then: given a payment
// whose processor call has no outcome (or whose terminal is past its deadline), when the processor
// says what it recorded for that call, then the events that close it.
import { describe, expect, test } from "vitest";
import { openKey, resolveOpen } from "../../../src/engine/deciders/resolve-open.js";
import { OUTCOME_REFUSED } from "../../../src/engine/outcomes.js";
import { paymentAfter } from "./spec.js";
import { authorization, cardPresentIntent, collectedOnReader, collectingOnTerminal, ev, storedCardAuthorized, storedCardCaptured, storedCardIntent } from "./events.js";

describe("nothing open", () => {
  test("given a payment with no call in flight and no terminal collecting, then there is no key to look up and nothing to resolve", () => {
    for (const events of [storedCardIntent(), storedCardAuthorized(), storedCardCaptured(), collectedOnReader()]) {
      const payment = paymentAfter(events);
      expect(openKey(payment)).toBeNull();
      expect(resolveOpen(payment, "never_received", true)).toBeNull();
    }
  });
});

describe("an attempt without an outcome", () => {
  const capturing = paymentAfter([...storedCardAuthorized(), ev.captureAttempted("10.00", "att_2")]);

  test("given a capture attempted, then its attempt id is the key the processor is asked with", () => {
    expect(openKey(capturing)).toBe("att_2");
  });

  test("given a capture attempted, when the processor never received it, then the attempt is abandoned (the capture may be tried again)", () => {
    expect(resolveOpen(capturing, "never_received", false)).toEqual({ open: "CaptureAttempted", attempt_id: "att_2", processor: "never_received", events: [ev.abandoned("att_2", "never_received")] });
  });

  test("given a capture attempted, when the processor captured, then the capture is recorded answering the attempt", () => {
    expect(resolveOpen(capturing, { call: "capture", outcome: { kind: "captured" } }, false)).toEqual({ open: "CaptureAttempted", attempt_id: "att_2", processor: "capture", events: [ev.captured("10.00", "att_2")] });
  });

  test("given a refund attempted, when the processor refunded, then the refund is recorded with the processor's refund id", () => {
    const refunding = paymentAfter([...storedCardCaptured(), ev.refundAttempted("4.00", "damaged", "att_3")]);
    expect(resolveOpen(refunding, { call: "refund", refund_id: "re_77" }, false)?.events).toEqual([
      { type: "PaymentRefunded", version: 1, data: { refund_id: "re_77", amount: "4.00", reason: "damaged", attempt_id: "att_3" } },
    ]);
  });

  test("given a charge attempted, when the processor refused it without acting, then the attempt is abandoned with its code", () => {
    const charging = paymentAfter([...storedCardIntent(), ev.authAttempted("10.00", "att_1")]);
    expect(resolveOpen(charging, { call: "refused", code: "card_expired", message: "expired" }, false)?.events).toEqual([ev.abandoned("att_1", "card_expired")]);
  });

  test("given a charge of 10.00 attempted, when the processor authorized another amount, then the machine refuses that answer and the attempt is abandoned as outcome_refused", () => {
    const charging = paymentAfter([...storedCardIntent(), ev.authAttempted("10.00", "att_1")]);
    expect(resolveOpen(charging, { call: "authorize", outcome: { kind: "authorized", authorization: authorization("9.00") } }, false)?.events).toEqual([ev.abandoned("att_1", OUTCOME_REFUSED)]);
  });

  test("given a terminal asked to start, when it started and is still collecting past the deadline, then the start is recorded, the shopper timed out, the terminal stopped", () => {
    const starting = paymentAfter([...cardPresentIntent(), ev.terminalAttempted("A_sync", "att_1")]);
    expect(resolveOpen(starting, { call: "start_terminal", outcome: null }, true)).toEqual({
      open: "TerminalAuthorizationAttempted",
      attempt_id: "att_1",
      processor: "still_collecting",
      events: [ev.terminalStarted("A_sync", "att_1"), ev.timedOut()],
      stopTerminal: "tml_1",
    });
  });

  test("given a terminal asked to start, when it started and is still collecting before the deadline, then only the start is recorded", () => {
    const starting = paymentAfter([...cardPresentIntent(), ev.terminalAttempted("A_sync", "att_1")]);
    expect(resolveOpen(starting, { call: "start_terminal", outcome: null }, false)?.events).toEqual([ev.terminalStarted("A_sync", "att_1")]);
  });
});

describe("a terminal collecting past its deadline", () => {
  const collecting = paymentAfter(collectingOnTerminal("A_sync"));

  test("given a terminal collecting, then the key is the attempt that started it", () => {
    expect(openKey(collecting)).toBe("att_1");
  });

  test("given a terminal collecting, when the processor recorded the shopper's payment, then the authorization is recorded as the terminal's report", () => {
    expect(resolveOpen(collecting, { call: "start_terminal", outcome: { kind: "authorized", authorization: authorization() } }, true)).toEqual({
      open: "TerminalWait",
      attempt_id: "att_1",
      processor: "start_terminal",
      events: [ev.authorized()],
    });
  });

  test("given a terminal collecting, when the processor has no outcome yet, then the shopper timed out and the terminal is stopped", () => {
    expect(resolveOpen(collecting, { call: "start_terminal", outcome: null }, true)).toEqual({ open: "TerminalWait", attempt_id: "att_1", processor: "still_collecting", events: [ev.timedOut()], stopTerminal: "tml_1" });
  });
});
