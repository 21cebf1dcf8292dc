// Rule (spec §7): each failure reaches the record with its code, its description and the status
// §3/§7 give it; the expected values are written out in ./spec-errors.ts.
import { describe, expect, test } from "vitest";
import { LAST_ERROR_CODES } from "../../machines/failures.js";
import { A, failureOf, rig } from "../flows/harness.js";
import { SPEC_ERRORS } from "./spec-errors.js";

describe("Rule: each §7 test card fails with its code, description and status", () => {
  test.each(SPEC_ERRORS.map((e) => [e.card, e.code, e.status, e] as const))(
    "given a payment collecting on an asynchronous terminal, when card %s is presented, then %s with status %s",
    async (card, code, status, { description }) => {
      const { engine, sims, terminal, intent, get } = await rig();
      const terminal_id = await terminal("A_async");
      const { payment_id } = await intent(A, { capture_method: "automatic" });
      await engine.authorize({ external_account_id: A, payment_id, terminal_id });
      await sims.terminal.presentCard(terminal_id, card);
      expect(failureOf(await get(A, payment_id))).toEqual({ status, last_error: description, last_error_code: code });
    },
  );

  test("given the §7 table, then exactly its ten codes are the codes a record can carry", () => {
    expect([...LAST_ERROR_CODES].sort()).toEqual(SPEC_ERRORS.map((e) => e.code).sort());
  });
});
