// Rules of capture (spec §3 "requires_capture | capture | amount given"; §4.6):
// - a payment is captured once: a second capture is refused, whatever its amount;
// - a capture takes at most the authorized amount; the rest of a partial capture is released;
// - a requested capture settles for exactly the amount requested: a settlement that differs is
//   refused and the payment stays capture_requested;
// - a capture answered capture_requested counts as captured in the record ("amount_captured equals
//   the captured amount; amount_refundable set"); a refund waits until it settles.
import { describe, expect, test } from "vitest";
import { streams } from "../../machines/events.js";
import { asOf } from "../../src/audit/as-of.js";
import { RECORD_RULES, type RecordedEvent } from "../../src/events/envelope.js";
import { publicEventOf, type PublicEvent, type StreamFold } from "../../src/present/public-events.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import { refused } from "../flows/harness.js";
import { ACCOUNT, givenAnEngine, refusedAsUnexpectedState } from "./given.js";

describe("Rule: a payment is captured once", () => {
  test("given a payment captured in full, when it is captured again, then the second capture is refused and nothing changes", async () => {
    const { engine, get, captured } = await givenAnEngine();
    const payment_id = await captured("10.00");
    const before = await get(payment_id);
    expect(before).toMatchObject({ status: "succeeded", amount_captured: "10.00" });

    await refusedAsUnexpectedState(engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "10.00" }));
    await refusedAsUnexpectedState(engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "0.01" }));
    expect(await get(payment_id)).toEqual(before);
  });

  test("given a partial capture of 6.00 on 10.00, when the remaining 4.00 is captured, then it is refused: the rest was released", async () => {
    const { engine, get, authorized } = await givenAnEngine();
    const payment_id = await authorized("10.00");
    expect(await engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "6.00" })).toMatchObject({ status: "succeeded", amount_captured: "6.00", amount_capturable: "0.00" });

    await refusedAsUnexpectedState(engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "4.00" }));
    expect(await get(payment_id)).toMatchObject({ status: "succeeded", amount_captured: "6.00" });
  });

  test("given a capture requested and not yet settled, when it is captured again, then the second capture is refused", async () => {
    const { engine, processors, get, authorized } = await givenAnEngine();
    const payment_id = await authorized("10.00");
    processors.nextCapture = "capture_requested";
    await engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "10.00" });

    await refusedAsUnexpectedState(engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "10.00" }));
    expect(await get(payment_id)).toMatchObject({ status: "capture_requested", amount_captured: "10.00" });
  });
});

describe("Rule: a capture takes more than 0 and at most the authorized amount", () => {
  test.each(["10.01", "15.00", "0.00"])("given 10.00 authorized, when %s is captured, then it is refused (amount) and the payment still requires capture", async (amount) => {
    const { engine, get, authorized } = await givenAnEngine();
    const payment_id = await authorized("10.00");
    expect(await refused(engine.capture({ external_account_id: ACCOUNT, payment_id, amount }))).toMatchObject({ status: 400, param: "amount" });
    expect(await get(payment_id)).toMatchObject({ status: "requires_capture", amount_capturable: "10.00", amount_captured: "0.00" });
  });

  test.each(["10.00", "0.01"])("given 10.00 authorized, when %s is captured, then the payment succeeds with that amount captured", async (amount) => {
    const { engine, authorized } = await givenAnEngine();
    const payment_id = await authorized("10.00");
    expect(await engine.capture({ external_account_id: ACCOUNT, payment_id, amount })).toMatchObject({ status: "succeeded", amount_captured: amount, amount_refundable: amount });
  });
});

describe("Rule: a requested capture settles for exactly the amount requested", () => {
  test.each(["5.00", "9.99", "10.01", "12.00"])("given a capture of 10.00 requested, when the processor reports a settlement of %s, then it is refused and the payment stays capture_requested", async (settled) => {
    const { engine, processors, get, authorized } = await givenAnEngine();
    const payment_id = await authorized("12.00");
    processors.nextCapture = "capture_requested";
    expect(await engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "10.00" })).toMatchObject({ status: "capture_requested", amount_captured: "10.00" });

    await refusedAsUnexpectedState(processors.report(payment_id, { kind: "capture_settled", amount: settled }));
    expect(await get(payment_id)).toMatchObject({ status: "capture_requested", amount_captured: "10.00" });
  });

  test("given a capture of 10.00 requested, when the processor reports a settlement of 10.00, then the payment succeeds with 10.00 captured", async () => {
    const { engine, processors, get, authorized } = await givenAnEngine();
    const payment_id = await authorized("12.00");
    processors.nextCapture = "capture_requested";
    await engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "10.00" });
    await processors.report(payment_id, { kind: "capture_settled", amount: "10.00" });
    expect(await get(payment_id)).toMatchObject({ status: "succeeded", amount_captured: "10.00", amount_refundable: "10.00", amount_capturable: "0.00" });
  });
});

describe("Rule: a requested capture is in the record's amounts before it settles", () => {
  test("given 6.00 of 10.00 requested for capture, then the record shows 6.00 captured and refundable, nothing capturable, and a refund is refused until the capture settles", async () => {
    const { engine, processors, get, authorized } = await givenAnEngine();
    const payment_id = await authorized("10.00");
    processors.nextCapture = "capture_requested";
    const requested = await engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "6.00" });
    expect(requested).toMatchObject({ status: "capture_requested", amount_authorized: "10.00", amount_captured: "6.00", amount_capturable: "0.00", amount_refundable: "6.00", amount_refunded: "0.00" });
    expect(await get(payment_id)).toEqual(requested);

    await refusedAsUnexpectedState(engine.refund({ external_account_id: ACCOUNT, payment_id, amount: "1.00" }));
    await processors.report(payment_id, { kind: "capture_settled", amount: "6.00" });
    expect(await engine.refund({ external_account_id: ACCOUNT, payment_id, amount: "1.00" })).toMatchObject({ status: "succeeded", amount_captured: "6.00", amount_refunded: "1.00", amount_refundable: "5.00" });
  });
});

describe("Rule: what was published about a payment keeps the record rules of its time (README: Upgrading)", () => {
  test("given a capture requested, its public event and as-of record show 6.00 captured; the same event appended before record rules 2 shows 0.00", async () => {
    const { engine, processors, authorized } = await givenAnEngine();
    const payment_id = await authorized("10.00");
    processors.nextCapture = "capture_requested";
    await engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "6.00" });
    const events = await engine.store.readStream(streams.payment(payment_id));
    const requested = events.findIndex((e) => e.type === "CaptureRequested");
    expect(events[requested]?.metadata.record_rules).toBe(RECORD_RULES);

    /** The public event of the capture request, and the record as of it, with the stream's events as given. */
    const published = async (stream: RecordedEvent[]) => {
      let fold: StreamFold | undefined;
      let event: PublicEvent | null = null;
      for (const e of stream.slice(0, requested + 1)) ({ fold, event } = publicEventOf(fold, e) ?? { fold, event: null });
      const store = createMemoryStore();
      for (const { stream: name, revision: _r, position: _p, ...e } of stream) await store.append(name, [e], { expectedRevision: "any" });
      const then = await asOf(store, payment_id, stream[requested]!.metadata.timestamp);
      return { event: event?.data.object, asOf: then?.record };
    };
    const today = await published(events);
    expect(today.event).toMatchObject({ status: "capture_requested", amount_captured: "6.00", amount_refundable: "6.00" });
    expect(today.asOf).toMatchObject({ status: "capture_requested", amount_captured: "6.00" });

    // as release 0.1.0 appended them: no record_rules in the metadata
    const before = events.map(({ metadata: { record_rules: _, ...metadata }, ...e }) => ({ ...e, metadata }));
    const then = await published(before);
    expect(then.event).toMatchObject({ status: "capture_requested", amount_captured: "0.00", amount_refundable: "0.00" });
    expect(then.asOf).toMatchObject({ status: "capture_requested", amount_captured: "0.00" });
  });
});
