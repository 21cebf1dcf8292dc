// Rule (extension, DESIGN: refunds): refunds of a payment add up to at most what was captured;
// each refund is more than 0. A refund past that is refused with nothing recorded.
import { describe, expect, test } from "vitest";
import { refused } from "../flows/harness.js";
import { ACCOUNT, givenAnEngine, refusedAsUnexpectedState } from "./given.js";

describe("Rule: refunds add up to at most the captured amount", () => {
  test("given 10.00 captured, when 6.00 then 4.01 are refunded, then the second is refused; 4.00 is then accepted and nothing more", async () => {
    const { engine, get, captured } = await givenAnEngine();
    const payment_id = await captured("10.00");
    const refund = (amount: string) => engine.refund({ external_account_id: ACCOUNT, payment_id, amount });

    expect(await refund("6.00")).toMatchObject({ amount_refunded: "6.00", amount_refundable: "4.00" });
    expect(await refused(refund("4.01"))).toMatchObject({ status: 400, param: "amount", code: "amount_too_large" });
    expect(await get(payment_id)).toMatchObject({ amount_refunded: "6.00", amount_refundable: "4.00" });

    expect(await refund("4.00")).toMatchObject({ status: "succeeded", amount_refunded: "10.00", amount_refundable: "0.00" });
    // fully refunded: nothing is refundable, so refund is no longer a step of the payment (409)
    await refusedAsUnexpectedState(refund("0.01"));
    expect(await get(payment_id)).toMatchObject({ amount_refunded: "10.00", amount_refundable: "0.00" });
  });

  test("given 6.00 captured of 10.00 authorized, when 6.01 is refunded, then it is refused: the captured amount bounds refunds, not the authorized one", async () => {
    const { engine, authorized } = await givenAnEngine();
    const payment_id = await authorized("10.00");
    await engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "6.00" });
    expect(await refused(engine.refund({ external_account_id: ACCOUNT, payment_id, amount: "6.01" }))).toMatchObject({ status: 400, param: "amount" });
    expect(await engine.refund({ external_account_id: ACCOUNT, payment_id, amount: "6.00" })).toMatchObject({ amount_refunded: "6.00", amount_refundable: "0.00" });
  });

  test("given 10.00 captured, when a refund of 0.00 is asked, then it is refused", async () => {
    const { engine, get, captured } = await givenAnEngine();
    const payment_id = await captured("10.00");
    expect(await refused(engine.refund({ external_account_id: ACCOUNT, payment_id, amount: "0.00" }))).toMatchObject({ status: 400, param: "amount" });
    expect(await get(payment_id)).toMatchObject({ amount_refunded: "0.00", amount_refundable: "10.00" });
  });

  test("given 10.00 captured, when a full refund (no amount) is asked twice, then the second is refused", async () => {
    const { engine, captured } = await givenAnEngine();
    const payment_id = await captured("10.00");
    expect(await engine.refund({ external_account_id: ACCOUNT, payment_id })).toMatchObject({ amount_refunded: "10.00", amount_refundable: "0.00" });
    await refusedAsUnexpectedState(engine.refund({ external_account_id: ACCOUNT, payment_id }));
  });

  test("given a payment only authorized, when it is refunded, then it is refused as not allowed in requires_capture", async () => {
    const { engine, authorized } = await givenAnEngine();
    const payment_id = await authorized("10.00");
    await refusedAsUnexpectedState(engine.refund({ external_account_id: ACCOUNT, payment_id, amount: "1.00" }));
  });
});
