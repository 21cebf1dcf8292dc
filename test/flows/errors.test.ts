// Spec §7: every last_error_code, reached through the simulators (a test card on a terminal, a test
// amount on a stored card), visible on the payment record; and the retries spec §3 allows.
// Expected codes, descriptions and statuses are written out in test/rules/spec-errors.ts, never
// read from the tables under test.
import { describe, expect, test } from "vitest";
import { SPEC_ERRORS, jpyOf } from "../rules/spec-errors.js";
import { A, failureOf, rig } from "./harness.js";

const byCode = SPEC_ERRORS.map((e) => [e.code, e] as const);

describe("every §7 error code, on the payment record", () => {
  test.each(byCode)("%s: test card on an asynchronous terminal; the retry with a good card succeeds", async (code, { card, description, status }) => {
    const { engine, sims, terminal, intent, poll } = await rig();
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "manual" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });
    const { record } = await poll(A, payment_id, () => sims.terminal.presentCard(terminal_id, card));
    expect(failureOf(record)).toEqual({ status, last_error: description, last_error_code: code });

    // spec §3: "requires_payment_method or error | auth again | retry -> payment_method_requested"
    expect((await engine.authorize({ external_account_id: A, payment_id, terminal_id })).status).toBe("payment_method_requested");
    const { record: retried } = await poll(A, payment_id, () => sims.terminal.presentCard(terminal_id));
    expect(retried).toMatchObject({ status: "requires_capture", amount_authorized: "10.00" });
    expect(retried.last_error).toBeUndefined();
    expect(retried.last_error_code).toBeUndefined();
  });

  test.each(byCode)("%s: test amount on a stored-card charge (USD and JPY)", async (code, { usd, description, status }) => {
    const { engine, intent } = await rig();
    await engine.openAccount({ external_account_id: "acct_jpy", processor: "A", currency: "JPY" });
    for (const [account, amount] of [[A, usd], ["acct_jpy", jpyOf(usd)]] as const) {
      const { payment_id } = await intent(account, { payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_1", amount });
      const auth = await engine.authorize({ external_account_id: account, payment_id });
      expect(failureOf(auth)).toEqual({ status, last_error: description, last_error_code: code });
    }
  });
});

describe("declines without a code, expired card, AVS results", () => {
  test.each([
    ["4000000000000002", "10.00", "Your card was declined"],
    ["4242424242424242", "99.11", "Your card was declined"],
    ["4000000000000069", "10.00", "Your card has expired"],
    ["4242424242424242", "99.12", "Your card has expired"],
    // a declining card keeps its outcome whatever the amount
    ["4000000000000002", "99.13", "Your card was declined"],
  ])("card %s, amount %s: error with last_error %j and no last_error_code", async (card, amount, last_error) => {
    const { engine, sims, terminal, intent, get } = await rig();
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "automatic", amount });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });
    await sims.terminal.presentCard(terminal_id, card);
    expect(failureOf(await get(A, payment_id))).toEqual({ status: "error", last_error, last_error_code: undefined });
  });

  test.each([
    ["4242424242424242", 0, "Address and postal code match"],
    ["4000000000000010", 1, "Address matches, postal code does not"],
    ["4000000000000028", 2, "Postal code matches, address does not"],
    ["4000000000000036", 3, "Neither address nor postal code match"],
  ])("card %s is approved with avs_response_code %i", async (card, code, message) => {
    const { engine, sims, terminal, intent, get } = await rig();
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "manual" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });
    await sims.terminal.presentCard(terminal_id, card);
    expect(await get(A, payment_id)).toMatchObject({ status: "requires_capture", avs_response_code: code, avs_response_message: message });
  });

  test("an unknown card number is refused by the simulator, and the terminal keeps collecting", async () => {
    const { engine, sims, terminal, intent } = await rig();
    const terminal_id = await terminal("A_async");
    const { payment_id } = await intent(A, { capture_method: "manual" });
    await engine.authorize({ external_account_id: A, payment_id, terminal_id });
    await expect(sims.terminal.presentCard(terminal_id, "4111111111111111")).rejects.toMatchObject({ code: "invalid_test_card" });
    expect(sims.terminal.collecting(terminal_id)).toBe(payment_id);
  });
});
