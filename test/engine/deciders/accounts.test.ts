// Merchant accounts and their terminals: streams of one event, given/when/then (given nothing: a new stream).
import { describe, expect, test } from "vitest";
import { decideOpenAccount, decideRegisterTerminal } from "../../../src/engine/deciders/accounts.js";
import { InvalidRequest } from "../../../src/errors.js";

describe("open account", () => {
  test("given no account, when one is opened in USD on processor B, then AccountOpened", () => {
    expect(decideOpenAccount({ external_account_id: "acct_1", processor: "B", currency: "USD" })).toEqual({
      start: { type: "AccountOpened", version: 1, data: { external_account_id: "acct_1", processor: "B", currency: "USD" } },
    });
  });

  test("given no account, when its currency is not ISO 4217, then 400 parameter_invalid naming currency", () => {
    const decision = decideOpenAccount({ external_account_id: "acct_1", processor: "A", currency: "XYZ" });
    expect("refuse" in decision && decision.refuse).toBeInstanceOf(InvalidRequest);
    expect("refuse" in decision && decision.refuse).toMatchObject({ status: 400, code: "parameter_invalid", param: "currency", message: "currency: XYZ is not an ISO 4217 currency with minor units (metals, SDR and accounting units are not charged on cards)" });
  });
});

describe("register terminal", () => {
  test("given the account, when a terminal is registered, then TerminalRegistered under the new id at the command's time (label and serial default to null)", () => {
    expect(decideRegisterTerminal({ external_account_id: "acct_1", terminal_type: "A_sync" }, { terminal_id: "tml_1", now: "2026-01-01T00:00:00.000Z" })).toEqual({
      start: { type: "TerminalRegistered", version: 1, data: { terminal_id: "tml_1", external_account_id: "acct_1", terminal_type: "A_sync", label: null, serial_number: null, registered_at: "2026-01-01T00:00:00.000Z" } },
    });
  });

  test("given a label and a serial number, when a terminal is registered, then both are recorded", () => {
    const { start } = decideRegisterTerminal({ external_account_id: "acct_1", terminal_type: "B_reader", label: "Till 2", serial_number: "SN-9" }, { terminal_id: "rdr_1", now: "t" });
    expect(start.data).toMatchObject({ terminal_type: "B_reader", label: "Till 2", serial_number: "SN-9" });
  });
});
