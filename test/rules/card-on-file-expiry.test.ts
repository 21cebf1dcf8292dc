// Rule (spec §4.8 "Synchronous terminal, card present, save card"): "Card on file works with test
// cards whose expiry is 03/30 or later", i.e. (year, month) >= (2030, 03): 02/2030 is refused;
// 03/2030, any month of 2031 and later years are saved.
import { describe, expect, test } from "vitest";
import { canBeSavedOnFile } from "../../src/processors/simulator.js";
import { A, rig } from "../flows/harness.js";

describe("Rule: a card on file expires 03/2030 or later", () => {
  test.each([
    ["12", 2029, false],
    ["02", 2030, false],
    ["03", 2030, true],
    ["04", 2030, true],
    ["12", 2030, true],
    ["01", 2031, true],
    ["02", 2031, true],
    ["12", 2031, true],
    ["01", 2040, true],
  ] as const)("given a card expiring %s/%i, when it is to be saved on file, then saving is allowed: %s", (exp_month, exp_year, savable) => {
    expect(canBeSavedOnFile({ exp_month, exp_year })).toBe(savable);
  });

  test.each([
    ["4000000000000085", "03/2030", true],
    ["4000000000000077", "02/2030", false],
  ] as const)("given a payment on a synchronous terminal that saves its card, when test card %s (expiring %s) pays, then the card is on file: %s", async (card, _expiry, saved) => {
    const { engine, sims, terminal, intent } = await rig();
    const terminal_id = await terminal("A_sync");
    const { payment_id } = await intent(A, { capture_method: "automatic", external_customer_id: "cus_exp", allow_saving_card: true });
    const auth = engine.authorize({ external_account_id: A, payment_id, terminal_id });
    await sims.terminal.untilCollecting(terminal_id);
    await sims.terminal.presentCard(terminal_id, card);
    const record = await auth;

    // the payment stands either way; only the card on file depends on the expiry
    expect(record).toMatchObject({ status: "succeeded", amount_captured: "10.00" });
    expect(record.payment_method_id !== null).toBe(saved);
    expect((await engine.listCustomerCards(A, "cus_exp")).length).toBe(saved ? 1 : 0);
  });
});
