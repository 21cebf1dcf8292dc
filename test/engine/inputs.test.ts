// Bad input to the engine: a typed error that names the field, and nothing appended.
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { CardflowError, InvalidRequest, NotFound, TransitionNotAllowed } from "../../src/errors.js";
import { sequentialIds } from "../../src/ids.js";
import { CreateIntentInput, parseInput } from "../../src/inputs.js";
import { z } from "zod";
import type { CreateIntentRequest } from "../../src/inputs.js";

async function setup() {
  const engine = createEngine({ clock: manualClock(), ids: sequentialIds() });
  await engine.openAccount({ external_account_id: "acct", currency: "usd" });
  await engine.openAccount({ external_account_id: "acct_jpy", currency: "JPY" });
  return engine;
}

const intent: CreateIntentRequest = { external_account_id: "acct", amount: "10.00", payment_method_types: "card_present", capture_method: "manual" };

describe("bad input appends nothing and names the problem", () => {
  it.each([
    [{ ...intent, amount: "10.001" }, "amount", /more than 2 decimal places/],
    [{ ...intent, amount: -1 }, "amount", /greater than 0/],
    [{ ...intent, amount: "ten" }, "amount", /not a decimal number/],
    [{ ...intent, amount: undefined }, "amount", /amount/],
    [{ ...intent, capture_method: "later" }, "capture_method", /capture_method/],
    [{ ...intent, payment_method_types: "cash" }, "payment_method_types", /payment_method_types/],
    [{ ...intent, colour: "red" }, "colour", /unknown field: colour/],
    [{ ...intent, external_account_id: "" }, "external_account_id", /external_account_id/],
    [{ ...intent, payment_method_types: "card", payment_method_id: "pm_card_visa" }, "external_customer_id", /required with payment_method_id/],
    [{ ...intent, external_account_id: "acct_jpy", amount: "1.5" }, "amount", /more than 0 decimal places/],
  ])("createIntent %#", async (input, param, message) => {
    const engine = await setup();
    const before = (await engine.store.readAll()).length;
    // what an untyped caller (JavaScript, a parsed body) may send: the types would refuse it
    const error = await engine.createIntent(input as unknown as CreateIntentRequest).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequest);
    expect((error as InvalidRequest).param).toBe(param);
    expect((error as Error).message).toMatch(message);
    expect((await engine.store.readAll()).length).toBe(before);
  });

  it("an unknown account or payment is not found; another account's payment too", async () => {
    const engine = await setup();
    await expect(engine.createIntent({ ...intent, external_account_id: "nobody" })).rejects.toBeInstanceOf(NotFound);
    const created = await engine.createIntent(intent);
    await expect(engine.getPayment({ external_account_id: "acct_jpy", payment_id: created.payment_id })).rejects.toBeInstanceOf(NotFound);
    await expect(engine.getPayment({ external_account_id: "acct", payment_id: "pi_nope" })).rejects.toBeInstanceOf(NotFound);
    const before = (await engine.store.readAll()).length;
    const unknownCard = await engine.createIntent({ ...intent, payment_method_types: "card", payment_method_id: "pm_nope", external_customer_id: "c" }).catch((e: unknown) => e);
    expect(unknownCard).toBeInstanceOf(NotFound);
    expect(unknownCard).toMatchObject({ param: "payment_method_id", message: 'no card on file "pm_nope" for customer "c" of this account' });
    expect((await engine.store.readAll()).length).toBe(before);
  });

  it("the commands that take ids as arguments name a missing, empty or mistyped id (InvalidRequest, not NotFound)", async () => {
    const engine = await setup();
    const wrong = (call: () => Promise<unknown>) => call().catch((e: unknown) => e as InvalidRequest);
    expect(await wrong(() => engine.listTerminals(undefined as unknown as string))).toMatchObject({ name: "InvalidRequest", param: "external_account_id", code: "parameter_missing" });
    expect(await wrong(() => engine.listTerminals({ external_account_id: "acct" } as unknown as string))).toMatchObject({ name: "InvalidRequest", param: "external_account_id", code: "parameter_invalid" });
    expect(await wrong(() => engine.listCustomerCards("acct", ""))).toMatchObject({ name: "InvalidRequest", param: "external_customer_id", message: "external_customer_id: must not be empty" });
    expect(await wrong(() => engine.listCustomerCards("acct", undefined as unknown as string))).toMatchObject({ name: "InvalidRequest", param: "external_customer_id" });
    expect(await wrong(() => engine.allowedNextSteps("acct", undefined as unknown as string))).toMatchObject({ name: "InvalidRequest", param: "payment_id" });
    // well-formed ids still answer as before
    expect(await engine.listTerminals("acct")).toEqual([]);
    expect(await engine.listCustomerCards("acct", "cus_none")).toEqual([]);
    await expect(engine.allowedNextSteps("acct", "pi_nope")).rejects.toBeInstanceOf(NotFound);
  });

  it("a step the machine does not allow names the status and the allowed next steps", async () => {
    const engine = await setup();
    const created = await engine.createIntent(intent);
    const before = (await engine.store.readAll()).length;
    const error = (await engine.capture({ external_account_id: "acct", payment_id: created.payment_id, amount: 1 }).catch((e: unknown) => e)) as TransitionNotAllowed;
    expect(error).toBeInstanceOf(TransitionNotAllowed);
    expect(error.status).toBe(409);
    expect(error.currentStatus).toBe("requires_payment_method");
    expect(error.allowedNextSteps).toEqual(["authorize", "collect_payment_method", "cancel"]);
    expect((await engine.store.readAll()).length).toBe(before);
  });

  it("capture above amount_capturable and refund above amount_refundable are refused", async () => {
    const engine = await setup();
    const created = await engine.createIntent({ ...intent, payment_method_types: "card", payment_method_id: "pm_card_visa", external_customer_id: "c" });
    const ref = { external_account_id: "acct", payment_id: created.payment_id };
    await engine.authorize(ref);
    await expect(engine.capture({ ...ref, amount: "10.01" })).rejects.toThrow(/exceeds amount_capturable 10.00/);
    await engine.capture({ ...ref, amount: "4.00" });
    await expect(engine.refund({ ...ref, amount: "4.01" })).rejects.toThrow(/exceeds amount_refundable 4.00/);
    const full = await engine.refund(ref);
    expect([full.amount_refunded, full.amount_refundable]).toEqual(["4.00", "0.00"]);
    await expect(engine.refund(ref)).rejects.toBeInstanceOf(CardflowError);
  });

  it("a second account with the same id is refused", async () => {
    const engine = await setup();
    await expect(engine.openAccount({ external_account_id: "acct" })).rejects.toThrow(/already exists/);
    await expect(engine.openAccount({ external_account_id: "x", currency: "ABC" })).rejects.toThrow(/not an ISO 4217 currency/);
  });
});

describe("inputs are parsed once", () => {
  it("takes what parseInput returned for the same schema as it is; parses anything else", () => {
    let parses = 0;
    const schema = z.strictObject({ name: z.string().transform((s) => (parses++, s.trim())) });
    const first = parseInput(schema, { name: " a " });
    expect([first, parses]).toEqual([{ name: "a" }, 1]);
    // the HTTP API parsed it; the engine's handler gets it with the same schema: not parsed again
    expect(parseInput(schema, first)).toBe(first);
    expect(parses).toBe(1);
    // an equal object that parseInput did not return is parsed, as is the same object under another schema
    expect(parseInput(schema, { name: "a" })).not.toBe(first);
    expect(parses).toBe(2);
    expect(() => parseInput(z.strictObject({ other: z.string() }), first)).toThrow(InvalidRequest);
  });

  it("an input the HTTP API parsed answers the engine's command as the raw one does", async () => {
    const engine = await setup();
    const parsed = parseInput(CreateIntentInput, { ...intent, external_account_id: "acct", amount: 10 });
    const created = await engine.createIntent(parsed);
    expect(created).toMatchObject({ external_account_id: "acct", amount: "10.00", currency: "USD", status: "requires_payment_method" });
  });
});
