// Rule (spec §2.1): the full payment record, field by field, as the status read returns it
// (projections/payment-record.ts): amounts in the currency's minor units, the authorization's tip,
// donation, code and AVS result, the card object, and last_error / AVS fields present only when set.
import { describe, expect, test } from "vitest";
import { TEST_CARD } from "../support/scripted-processor.js";
import { ACCOUNT, authorization, givenAnEngine } from "./given.js";

describe("Rule: the payment record carries the spec's fields (§2.1)", () => {
  test("given a stored-card intent of 10.00 authorized for 12.00 with a tip of 1.50 and a donation of 0.50, captured and 2.00 refunded, then every field says so", async () => {
    const { engine, processors, get, storedCardIntent } = await givenAnEngine();
    const payment_id = await storedCardIntent("manual");
    processors.nextAuthorization = { kind: "authorized", authorization: authorization("12.00", "1.50", "0.50") };
    await engine.authorize({ external_account_id: ACCOUNT, payment_id });
    await engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "12.00" });
    await engine.refund({ external_account_id: ACCOUNT, payment_id, amount: "2.00" });

    const record = await get(payment_id);
    expect(record).toMatchObject({
      payment_id,
      status: "succeeded",
      amount: "10.00",
      amount_authorized: "12.00",
      amount_captured: "12.00",
      amount_capturable: "0.00",
      amount_refunded: "2.00",
      amount_refundable: "10.00",
      tip_amount: "1.50",
      donation_amount: "0.50",
      currency: "USD",
      card_present: false,
      payment_method_id: "pm_card_visa",
      notes: null,
      authorization_code: "RULE01",
      processor: "A",
      funding_source: "credit",
      avs_response_code: 0,
      avs_response_message: "Address and postal code match",
      external_account_id: ACCOUNT,
      external_customer_id: "cus_rules",
      capture_method: "manual",
      payment_method_types: "card",
      terminal_id: null,
    });
    expect(record.payment).toEqual({
      type: TEST_CARD.type,
      brand: "visa",
      last_4: "4242",
      exp_month: "12",
      exp_year: 2031,
      cardholder_name: "TEST CARDHOLDER",
      receipt_data: null,
      payment_method_id: "pm_card_visa",
    });
    expect(Number.isInteger(record.request_id)).toBe(true);
    expect(record).not.toHaveProperty("last_error");
    expect(record).not.toHaveProperty("last_error_code");
  });

  test("given an authorization without an AVS result, then the record has no avs_response_code nor avs_response_message", async () => {
    const { engine, processors, get, storedCardIntent } = await givenAnEngine();
    const payment_id = await storedCardIntent("manual");
    processors.nextAuthorization = { kind: "authorized", authorization: { ...authorization("10.00"), avs_response_code: null, avs_response_message: null } };
    await engine.authorize({ external_account_id: ACCOUNT, payment_id });
    const record = await get(payment_id);
    expect(record).not.toHaveProperty("avs_response_code");
    expect(record).not.toHaveProperty("avs_response_message");
  });

  test("given a card-present intent collecting on a terminal, then nothing is authorized yet: zero tip and donation, no code, no card, the terminal named", async () => {
    const { get, collectingOnTerminal } = await givenAnEngine();
    const record = await get(await collectingOnTerminal("manual", "25.00"));
    expect(record).toMatchObject({
      status: "payment_method_requested",
      amount: "25.00",
      amount_authorized: "0.00",
      amount_refundable: "0.00",
      tip_amount: "0.00",
      donation_amount: "0.00",
      authorization_code: null,
      funding_source: null,
      card_present: true,
      payment_method_id: null,
      external_customer_id: null,
    });
    expect(record.terminal_id).toMatch(/./);
    expect(record).not.toHaveProperty("payment");
    expect(record).not.toHaveProperty("avs_response_code");
  });
});
