// What a retry with an Idempotency-Key gets from its earlier try (src/engine/outcomes.ts
// earlierTry), given/when/then: given the payment's stream (each event with the key of the request
// that appended it, null for the reconciler), when a request is retried with key K, then it is
// answered 503 (call open), decided anew (call abandoned, nothing else done), or answered with the
// payment as that try left it. And the machine's rule it rests on: which event closes an attempt.
import { describe, expect, test } from "vitest";
import { closesAttempt, type AttemptEvent, type PaymentEvent } from "../../../machines/events.js";
import { stateOf } from "../../../machines/fold.js";
import { UNRECORDED } from "../../../src/engine/deciders/decision.js";
import { earlierTry, sameCallAgain } from "../../../src/engine/outcomes.js";
import type { RecordedEvent } from "../../../src/store/port.js";
import { CARD_NOT_PRESENT, clientSdkIntent, collectingOnTerminal, ev, storedCardAuthorized } from "./events.js";

/** The stream as stored: [event, key of the request that appended it, its actor (a merchant's key id unless given)]. */
function stream(...entries: [PaymentEvent, string | null, string?][]): RecordedEvent[] {
  return entries.map(([e, key, actor = "key_merchant"], revision) => ({
    ...e,
    id: `ev_${revision}`,
    stream: "payment-pay_1",
    revision,
    position: revision + 1,
    metadata: { timestamp: "2026-01-01T00:00:00.000Z", request_id: revision + 1, idempotency_key: key, actor },
  }));
}
const authorized = () => storedCardAuthorized().map((e): [PaymentEvent, string | null] => [e, "auth"]);
const answered = (events: RecordedEvent[], key: string) => {
  const earlier = earlierTry(events, key, false);
  return earlier && "answer" in earlier ? { status: stateOf(earlier.answer).status, context: earlier.answer.context, through: earlier.through.revision } : earlier;
};

describe("which event closes an attempt (machines/events.ts)", () => {
  const capture = ev.captureAttempted("10.00", "att_2") as AttemptEvent;
  test("its outcome answers it, AttemptAbandoned abandons it, anything naming another attempt or not its outcome leaves it open", () => {
    expect(closesAttempt(capture, ev.captured("10.00", "att_2"))).toBe("answered");
    expect(closesAttempt(capture, ev.captureRequested("10.00", "att_2"))).toBe("answered");
    expect(closesAttempt(capture, ev.abandoned("att_2"))).toBe("abandoned");
    expect(closesAttempt(capture, ev.captured("10.00", "att_9"))).toBeNull();
    expect(closesAttempt(capture, ev.captured("10.00"))).toBeNull();
    expect(closesAttempt(capture, ev.refunded("10.00", "att_2"))).toBeNull();
  });
});

describe("a retry of a capture whose answer was lost", () => {
  test("given no call under the key, then nothing is answered from the stream (a first try)", () => {
    expect(earlierTry(stream(...authorized()), "cap", false)).toBeUndefined();
  });

  test("given the capture attempted and no outcome yet, then its call is open: 503 again, no second call", () => {
    expect(earlierTry(stream(...authorized(), [ev.captureAttempted("10.00", "att_2"), "cap"]), "cap", false)).toEqual({ open: "att_2" });
  });

  test("given the reconciler recorded the capture, then the answer is the payment captured", () => {
    const events = stream(...authorized(), [ev.captureAttempted("10.00", "att_2"), "cap"], [ev.captured("10.00", "att_2"), null]);
    expect(answered(events, "cap")).toMatchObject({ status: "succeeded", context: { amount_captured: "10.00" }, through: 4 });
  });

  test("given a refund by another request after it, then the answer is still the payment as the capture left it", () => {
    const events = stream(
      ...authorized(),
      [ev.captureAttempted("10.00", "att_2"), "cap"],
      [ev.captured("10.00", "att_2"), null],
      [ev.refundAttempted("3.00", null, "att_3"), "ref"],
      [ev.refunded("3.00", "att_3"), "ref"],
    );
    expect(answered(events, "cap")).toMatchObject({ status: "succeeded", context: { amount_captured: "10.00", amount_refunded: "0.00" }, through: 4 });
  });

  test("given the reconciler abandoned it (the processor never received it), then the capture is decided anew: the same call, made again under its attempt id", () => {
    const events = stream(...authorized(), [ev.captureAttempted("10.00", "att_2"), "cap"], [ev.abandoned("att_2"), null]);
    expect(earlierTry(events, "cap", false)).toEqual({ anew: true, reuse: ev.captureAttempted("10.00", "att_2") });
  });

  test("given the client SDK's request under the same key (its client secret's, not the merchant's), then the merchant's request is a first try, and the other way round", () => {
    // a probe: the merchant's capture with the key of the SDK's collect was answered as its replay, and nothing captured
    const events = stream(...authorized().map(([e, key]): [PaymentEvent, string | null, string] => [e, key, "client_secret"]));
    expect(earlierTry(events, "auth", false)).toBeUndefined();
    expect(answered(stream(...authorized()), "auth")).toMatchObject({ status: "requires_capture" });
    expect(earlierTry(stream(...authorized()), "auth", true)).toBeUndefined();
    const byClient = earlierTry(events, "auth", true);
    expect(byClient && "answer" in byClient && stateOf(byClient.answer).status).toBe("requires_capture");
  });

  test("given a try under the key before its keeping time began (the key was free again since), then it is another request: a first try", () => {
    // the stream's events are at 2026-01-01T00:00:00.000Z
    expect(earlierTry(stream(...authorized()), "auth", false, "2026-01-01T00:00:00.001Z")).toBeUndefined();
    expect(earlierTry(stream(...authorized()), "auth", false, "2026-01-01T00:00:00.000Z")).toMatchObject({ answer: expect.anything() });
  });

  test("given the processor refused it without acting, then the capture is decided anew as a new call (the refusal is its key's answer)", () => {
    const events = stream(...authorized(), [ev.captureAttempted("10.00", "att_2"), "cap"], [ev.abandoned("att_2", "processor_unavailable"), "cap"]);
    expect(earlierTry(events, "cap", false)).toEqual({ anew: true });
  });
});

describe("a retry of a blocking auth cut off by a crash (README: Idempotency-Key)", () => {
  test("given its terminal collection timed out by the reconciler (USER_TIMEOUT), then the answer is that: no second collection under the key", () => {
    const [intent, attempted, started] = collectingOnTerminal("A_sync");
    const events = stream([intent!, "create"], [attempted!, "auth"], [started!, "auth"], [ev.timedOut(), null]);
    expect(answered(events, "auth")).toMatchObject({ status: "requires_payment_method", context: { last_error_code: "USER_TIMEOUT" }, through: 3 });
  });
});

describe("a retry's call made again (src/engine/outcomes.ts sameCallAgain)", () => {
  const abandoned = ev.captureAttempted("10.00", "att_2") as AttemptEvent;
  const idOf = (e: AttemptEvent) => e.data.attempt_id;
  test("the same call (kind and amount) as the abandoned one: made again under its attempt id, the processor's key", () => {
    expect(idOf(sameCallAgain(ev.captureAttempted("10.00", UNRECORDED) as AttemptEvent, abandoned))).toBe("att_2");
  });
  test("another amount, another kind, a terminal's start, or nothing abandoned unanswered: a new call (its id given when recorded)", () => {
    expect(idOf(sameCallAgain(ev.captureAttempted("6.00", UNRECORDED) as AttemptEvent, abandoned))).toBe(UNRECORDED);
    expect(idOf(sameCallAgain(ev.refundAttempted("10.00", null, UNRECORDED) as AttemptEvent, abandoned))).toBe(UNRECORDED);
    expect(idOf(sameCallAgain(ev.captureAttempted("10.00", UNRECORDED) as AttemptEvent, undefined))).toBe(UNRECORDED);
    const start = (attempt_id: string) => ({ type: "TerminalAuthorizationAttempted", version: 1, data: { attempt_id, terminal_id: "tmr_1", terminal_type: "A_async" } }) as AttemptEvent;
    expect(idOf(sameCallAgain(start(UNRECORDED), start("att_3")))).toBe(UNRECORDED);
  });
});

describe("a retry of a card-form collect that made two calls (its authorization, then the automatic capture)", () => {
  const intent = clientSdkIntent({ capture_method: "automatic" }).map((e): [PaymentEvent, string | null] => [e, "create"]);
  const authorizedUnder = (key: string): [PaymentEvent, string | null][] => [
    [ev.collected(null), key],
    [ev.authAttempted("10.00", "att_1"), key],
    [ev.authorized("10.00", "att_1", CARD_NOT_PRESENT), key],
    [ev.captureAttempted("10.00", "att_2"), key],
  ];

  test("given its capture open, then 503 again", () => {
    expect(earlierTry(stream(...intent, ...authorizedUnder("auth")), "auth", false)).toEqual({ open: "att_2" });
  });

  test("given its capture abandoned after the authorization took effect, then the answer is the payment authorized, not a new try", () => {
    const events = stream(...intent, ...authorizedUnder("auth"), [ev.abandoned("att_2"), null]);
    expect(answered(events, "auth")).toMatchObject({ status: "requires_capture", through: 5 });
  });

  test("given the authorization's outcome learnt by the reconciler, its capture made as a follow-up, then the answer is the payment captured", () => {
    const events = stream(
      ...intent,
      [ev.collected(null), "auth"],
      [ev.authAttempted("10.00", "att_1"), "auth"],
      [ev.authorized("10.00", "att_1", CARD_NOT_PRESENT), null],
      [ev.captureAttempted("10.00", "att_2"), null],
      [ev.captured("10.00", "att_2"), null],
    );
    expect(answered(events, "auth")).toMatchObject({ status: "succeeded", through: 5 });
  });
});
