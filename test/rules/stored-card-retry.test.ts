// Rule (spec §2.1, §7): last_error and last_error_code describe the latest failed auth; an auth
// that succeeds afterwards clears both (a client parsing last_error_code must not see a stale code).
import { describe, expect, test } from "vitest";
import { failureOf } from "../flows/harness.js";
import { ACCOUNT, authorization, givenAnEngine } from "./given.js";

describe("Rule: a successful retry clears last_error and last_error_code", () => {
  test.each([
    ["ONLINE_DECLINED", "The processor declined the card", "error"],
    ["USER_TIMEOUT", "Timed out waiting for shopper", "requires_payment_method"],
  ] as const)("given a stored-card auth that failed with %s, when the retry is authorized, then the record has no last_error nor last_error_code", async (code, description, status) => {
    const { engine, processors, storedCardIntent } = await givenAnEngine();
    const payment_id = await storedCardIntent("manual");
    processors.nextAuthorization = { kind: "failed", last_error: description, last_error_code: code };
    expect(failureOf(await engine.authorize({ external_account_id: ACCOUNT, payment_id }))).toEqual({ status, last_error: description, last_error_code: code });

    processors.nextAuthorization = { kind: "authorized", authorization: authorization("10.00") };
    const retried = await engine.authorize({ external_account_id: ACCOUNT, payment_id });
    expect(failureOf(retried)).toEqual({ status: "requires_capture", last_error: undefined, last_error_code: undefined });
  });

  test.each(["captured", "capture_requested"] as const)(
    "given a stored-card auth that failed with ONLINE_DECLINED (automatic capture), when the retry is %s, then the record has no last_error nor last_error_code",
    async (kind) => {
      const { engine, processors, storedCardIntent } = await givenAnEngine();
      const payment_id = await storedCardIntent("automatic");
      processors.nextAuthorization = { kind: "failed", last_error: "The processor declined the card", last_error_code: "ONLINE_DECLINED" };
      await engine.authorize({ external_account_id: ACCOUNT, payment_id });

      processors.nextAuthorization = { kind, authorization: authorization("10.00") };
      const retried = await engine.authorize({ external_account_id: ACCOUNT, payment_id });
      expect(retried.last_error).toBeUndefined();
      expect(retried.last_error_code).toBeUndefined();
    },
  );

  test("given a stored-card auth that failed with a coded decline, when the retry fails without a code, then last_error_code is cleared and last_error is the new one", async () => {
    const { engine, processors, storedCardIntent } = await givenAnEngine();
    const payment_id = await storedCardIntent("manual");
    processors.nextAuthorization = { kind: "failed", last_error: "The processor declined the card", last_error_code: "ONLINE_DECLINED" };
    await engine.authorize({ external_account_id: ACCOUNT, payment_id });
    processors.nextAuthorization = { kind: "failed", last_error: "Your card was declined", last_error_code: null };
    expect(failureOf(await engine.authorize({ external_account_id: ACCOUNT, payment_id }))).toEqual({ status: "error", last_error: "Your card was declined", last_error_code: undefined });
  });
});
