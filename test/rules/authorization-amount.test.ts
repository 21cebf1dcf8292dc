// Rule: an authorization is recorded only when it is for exactly the intent's amount plus the tip
// plus the donation (spec §2.1: amount_authorized). Above or below, the processor's answer is
// refused: the payment stays where it was (its attempt is closed as abandoned, so it may be retried).
import { describe, expect, test } from "vitest";
import type { PaymentRecord } from "../../src/present/payment-record.js";
import type { Engine } from "../../src/engine.js";
import { ACCOUNT, authorization, givenAnEngine, refusedAsUnexpectedState } from "./given.js";

/** The processor acted, but not as asked: kept beside the payment for an operator, answered 502 (test/engine/unfit-answer.test.ts). */
async function keptForAnOperator(engine: Engine, paymentId: string, command: Promise<unknown>) {
  await expect(command).rejects.toMatchObject({ status: 502, code: "processor_answer_unapplied" });
  expect((await engine.store.readStream(`late_answers-${paymentId}`)).map((e) => e.type)).toEqual(["LateAnswerUnapplied"]);
}

/** The record is the one before (but for the request that last touched it); the refused attempt is closed. */
async function expectUnchanged(engine: Engine, paymentId: string, before: PaymentRecord, after: PaymentRecord) {
  expect({ ...after, request_id: before.request_id }).toEqual(before);
  const types = (await engine.store.readStream(`payment-${paymentId}`)).map((e) => e.type);
  expect(types.slice(-2)).toEqual(["AuthorizationAttempted", "AttemptAbandoned"]);
}

describe("Rule: the authorized amount equals amount + tip + donation", () => {
  test.each([
    ["15.00", "above"],
    ["10.01", "just above"],
    ["9.99", "just below"],
    ["5.00", "below"],
  ])("given a 10.00 stored-card intent (manual capture), when the processor authorizes %s (%s), then what the processor did is kept for an operator and the payment stays where it was", async (amount) => {
    const { engine, processors, get, storedCardIntent } = await givenAnEngine();
    const payment_id = await storedCardIntent("manual");
    const before = await get(payment_id);

    processors.nextAuthorization = { kind: "authorized", authorization: authorization(amount) };
    await keptForAnOperator(engine, payment_id, engine.authorize({ external_account_id: ACCOUNT, payment_id }));

    await expectUnchanged(engine, payment_id, before, await get(payment_id));
    expect(before).toMatchObject({ status: "requires_payment_method", amount_authorized: "0.00" });
  });

  test("given a 10.00 stored-card intent, when the processor authorizes exactly 10.00, then the payment requires capture for 10.00", async () => {
    const { engine, processors, storedCardIntent } = await givenAnEngine();
    const payment_id = await storedCardIntent("manual");
    processors.nextAuthorization = { kind: "authorized", authorization: authorization("10.00") };
    expect(await engine.authorize({ external_account_id: ACCOUNT, payment_id })).toMatchObject({ status: "requires_capture", amount_authorized: "10.00", amount_capturable: "10.00" });
  });

  test.each([
    ["12.00", "requires_capture"],
    ["11.99", "refused"],
    ["12.01", "refused"],
    ["10.00", "refused"],
    ["11.50", "refused"],
  ])("given a 10.00 intent collecting on a terminal, when the terminal reports %s authorized with a 1.50 tip and a 0.50 donation, then %s", async (amount, expected) => {
    const { processors, get, collectingOnTerminal } = await givenAnEngine();
    const payment_id = await collectingOnTerminal("manual");
    const report = processors.report(payment_id, { kind: "authorized", authorization: authorization(amount, "1.50", "0.50") });
    if (expected === "refused") {
      await refusedAsUnexpectedState(report);
      expect(await get(payment_id)).toMatchObject({ status: "payment_method_requested", amount_authorized: "0.00" });
    } else {
      await report;
      expect(await get(payment_id)).toMatchObject({ status: "requires_capture", amount_authorized: "12.00", amount_capturable: "12.00", tip_amount: "1.50" });
    }
  });

  test.each([
    ["captured", "15.00"],
    ["captured", "9.99"],
    ["capture_requested", "15.00"],
    ["capture_requested", "9.99"],
  ] as const)("given a 10.00 stored-card intent (automatic capture), when the processor answers %s for %s, then what the processor did is kept for an operator and the payment stays where it was", async (kind, amount) => {
    const { engine, processors, get, storedCardIntent } = await givenAnEngine();
    const payment_id = await storedCardIntent("automatic");
    const before = await get(payment_id);
    processors.nextAuthorization = { kind, authorization: authorization(amount) };
    await keptForAnOperator(engine, payment_id, engine.authorize({ external_account_id: ACCOUNT, payment_id }));
    await expectUnchanged(engine, payment_id, before, await get(payment_id));
  });

  test.each([
    ["captured", "succeeded", "10.00"],
    ["capture_requested", "capture_requested", "10.00"],
  ] as const)("given a 10.00 stored-card intent (automatic capture), when the processor answers %s for 10.00, then the payment is %s", async (kind, status, amount_captured) => {
    const { engine, processors, storedCardIntent } = await givenAnEngine();
    const payment_id = await storedCardIntent("automatic");
    processors.nextAuthorization = { kind, authorization: authorization("10.00") };
    expect(await engine.authorize({ external_account_id: ACCOUNT, payment_id })).toMatchObject({ status, amount_authorized: "10.00", amount_captured });
  });
});
