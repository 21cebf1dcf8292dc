// Every error path answers problem+json (RFC 9457) with a 4xx, names the field, and appends nothing.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ambiguity } from "../../src/http/json-body.js";
import { expectProblem, startApi, type Api, type Merchant } from "./harness.js";

let api: Api;
let m: Merchant;
beforeEach(async () => {
  api = await startApi({ bodyLimit: 4096 });
  m = await api.merchant("acct_err");
});
afterEach(async () => {
  await api.close();
});

const eventCount = async () => (await api.store.readAll()).length;

/** Runs a request that must fail, and checks that the store did not change. */
async function refused(run: () => Promise<import("./harness.js").Res>, status: number, code: string, param?: string | null) {
  const before = await eventCount();
  const res = await run();
  const problem = expectProblem(res, status, code, param);
  expect(await eventCount()).toBe(before);
  return problem;
}

/**
 * A request the processor refused: the call was made, so its attempt is recorded and closed as
 * abandoned (the processor did nothing), and nothing else is appended.
 */
async function refusedByProcessor(run: () => Promise<import("./harness.js").Res>, status: number, code: string) {
  const before = await eventCount();
  const problem = expectProblem(await run(), status, code);
  const appended = (await api.store.readAll()).slice(before);
  expect(appended.map((e) => e.type)).toEqual([expect.stringMatching(/Attempted$/), "AttemptAbandoned"]);
  expect((appended[1]!.data as { reason: string }).reason).toBe(code);
  return problem;
}

const intent = { amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c" };

describe("malformed requests", () => {
  it("invalid JSON, an empty JSON body, a body that is not an object", async () => {
    // the one cause named: where the text stops being JSON
    expect((await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: '{"amount": 1,' }), 400, "invalid_json", null)).detail).toBe("the body is not valid JSON: Expected double-quoted property name in JSON at position 13");
    expect((await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: '{"amount": 1} xyz' }), 400, "invalid_json", null)).detail).toBe("the body is not valid JSON: Unexpected non-whitespace character after JSON at position 14");
    await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: "" }), 400, "invalid_json");
    // no body and no media type: the same answer, not a validator's word for a missing value
    const bare = await fetch(`${api.base}/v2/payment/intent`, { method: "POST", headers: { authorization: `Bearer ${m.key}` } });
    expect([bare.status, await bare.json()]).toEqual([400, expect.objectContaining({ code: "invalid_json", detail: "the body is empty; send a JSON object", param: null })]);
    await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: "[1,2]" }), 400, "parameter_invalid", null);
    await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: "null" }), 400, "parameter_invalid");
    expect((await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key }), 400, "invalid_json")).detail).toBe("the body is empty; send a JSON object");
  });

  it("invalid JSON: the detail gives JSON.parse's cause, never the body's text it quotes around it (a card number, a secret), nor does the log", async () => {
    const log: string[] = [];
    await api.close();
    api = await startApi({ log });
    m = await api.merchant("acct_err");
    // JSON.parse's own messages quote the text around the fault ('Unexpected token ..., "..." is not valid JSON')
    const bodies: Array<[string, string]> = [
      ["MARKER4242424242424242", "the body is not valid JSON: Unexpected token 'M'"],
      ['{"card_number":"MARKER4242424242424242","x":tru}', "the body is not valid JSON: Unexpected token '}'"],
      ['{"client_secret":"pi_1_secret_MARKER"  oops}', "the body is not valid JSON: Expected ',' or '}' after property value in JSON at position 39"],
      ['{"card_number":"MARKER4242424242424242",]', "the body is not valid JSON: Expected double-quoted property name in JSON at position 40"],
      ['{"card_number":"MARKER4242', "the body is not valid JSON: Unterminated string in JSON at position 26"],
      ['{"note":"MARKER4242","a":]', "the body is not valid JSON: Unexpected token ']'"],
    ];
    for (const [raw, detail] of bodies) {
      const res = await api.request("POST", "/v2/payment/intent", { key: m.key, raw });
      expect(expectProblem(res, 400, "invalid_json", null).detail, raw).toBe(detail);
      expect(JSON.stringify(res.body)).not.toContain("MARKER");
    }
    await expect.poll(() => log.filter((l) => l.includes('"status":400')).length).toBe(bodies.length);
    expect(log.join("")).not.toContain("MARKER");
  });

  it("a prototype-poisoning body, an oversized body, another media type", async () => {
    const poisoned = await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: '{"__proto__": {"x": 1}}' }), 400, "invalid_json");
    expect(poisoned.detail).toBe("the body has a __proto__ or constructor.prototype key, refused (prototype poisoning)");
    const large = await refused(() => m.post("/v2/payment/intent", { ...intent, external_customer_id: "x".repeat(5000) }), 413, "body_too_large");
    expect(large.detail).toBe("the body is larger than this API accepts: 4096 bytes at most");
    await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: "amount=1", headers: { "content-type": "application/x-www-form-urlencoded" } }), 415, "unsupported_media_type");
    await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: "{}", headers: { "content-type": "text/plain" } }), 415, "unsupported_media_type");
  });

  it("a body read as sent: not UTF-8, another charset, compressed: refused, never decoded into something else", async () => {
    const body = (reference: string) => `{"external_account_id":"acct_err","amount":"1.00","payment_method_types":"card","capture_method":"manual","external_payment_id":"${reference}"}`;
    const latin1 = new Uint8Array(Buffer.from(body("caf\u00e9"), "latin1")); // é as the one byte 0xE9: not UTF-8
    expect((await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: latin1 }), 400, "invalid_json", null)).detail).toMatch(/not valid UTF-8/);
    for (const type of ["application/json; charset=latin1", "application/json; charset=utf-16", 'application/json; charset="iso-8859-1"']) {
      expect((await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: body("ok"), headers: { "content-type": type } }), 415, "unsupported_media_type")).detail, type).toMatch(/charset=utf-8/);
    }
    for (const encoding of ["gzip", "br", "deflate"]) {
      expect((await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: body("ok"), headers: { "content-encoding": encoding } }), 415, "unsupported_media_type")).detail).toMatch(/Content-Encoding/);
    }
    // UTF-8, declared or not, as sent: the reference is kept byte for byte
    for (const type of ["application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8"]) {
      const res = await api.request("POST", "/v2/payment/intent", { key: m.key, raw: new Uint8Array(Buffer.from(body("caf\u00e9 \u20ac"), "utf8")), headers: { "content-type": type, "content-encoding": "identity" } });
      expect([res.status, (res.body as { external_transaction_id: string }).external_transaction_id]).toEqual([200, "café €"]);
    }
  });

  it("a field required with another, not sent, is missing; a list's status takes success for succeeded (spec §3)", async () => {
    const problem = await refused(() => m.post("/v2/payment/intent", { ...intent, payment_method_id: "pm_card_visa", external_customer_id: undefined }), 400, "parameter_missing", "external_customer_id");
    expect(problem.detail).toBe("external_customer_id: is required with payment_method_id (stored-card charge)");
    const { body } = await m.post("/v1/payment/intent", { ...intent, payment_method_id: "pm_card_visa", external_customer_id: "cus_s", capture_method: "automatic" });
    expect((await m.post("/v1/payment/auth", { payment_id: body.payment_id })).body.status).toBe("success");
    const listed = async (status: string) => ((await m.get(`/v2/payments?external_account_id=acct_err&status=${status}`)).body.data as Array<{ payment_id: string }>).map((p) => p.payment_id);
    expect(await listed("success")).toEqual(await listed("succeeded"));
    expect(await listed("success")).toContain(body.payment_id);
  });

  it("an optional field sent as null is taken as not sent; a null amount or a null required field is refused", async () => {
    const cardPresent = { amount: "5.00", payment_method_types: "card_present", capture_method: "manual", payment_method_id: null, external_customer_id: null, external_payment_id: null, allow_saving_card: null };
    const created = await m.post("/v2/payment/intent", cardPresent);
    expect([created.status, created.body.status, created.body.external_transaction_id]).toEqual([200, "requires_payment_method", null]);
    // a stored-card charge: terminal_id null on the auth, then a refund whose reason is null
    const stored = await m.post("/v2/payment/intent", { ...intent, capture_method: "automatic", external_transaction_id: null });
    expect((await m.post("/v2/payment/auth", { payment_id: stored.body.payment_id, terminal_id: null, external_payment_id: null })).body.status).toBe("succeeded");
    // a refund's amount left out refunds everything: null is refused, not taken for that
    await refused(() => m.post("/v2/payment/refund", { payment_id: stored.body.payment_id, amount: null }), 400, "parameter_invalid", "amount");
    await refused(() => m.post("/v2/payment/intent", { ...intent, amount: null }), 400, "parameter_invalid", "amount");
    await refused(() => m.post("/v2/payment/intent", { ...intent, capture_method: null }), 400, "parameter_invalid", "capture_method");
    // with payment_method_id null, the stored-card rules do not apply to a card-present intent
    await refused(() => m.post("/v2/payment/intent", { ...intent, external_customer_id: null }), 400, "parameter_missing", "external_customer_id");
  });

  it("unknown fields, missing fields, wrong types name the field", async () => {
    const unknown = await refused(() => m.post("/v2/payment/intent", { ...intent, colour: "red" }), 400, "unknown_parameter", "colour");
    expect(unknown.detail).toContain("colour");
    const missing = await refused(() => m.post("/v2/payment/intent", { amount: "1.00", payment_method_types: "card" }), 400, "parameter_missing", "capture_method");
    expect(missing.detail).toBe("capture_method: is required");
    const noAmount = await refused(() => m.post("/v2/payment/intent", { ...intent, amount: undefined }), 400, "parameter_missing", "amount");
    expect(noAmount.detail).toBe("amount: is required");
    // a misspelled field: both the unknown field and the required one it left missing are named
    const { amount, ...withoutAmount } = intent;
    const misspelled = await refused(() => m.post("/v2/payment/intent", { ...withoutAmount, ammount: amount }), 400, "unknown_parameter", "ammount");
    expect(misspelled.detail).toBe("unknown field: ammount (did you mean amount?); amount: is required");
    // an optional field misspelled (a refund's amount: left out, it refunds everything) is named too
    const optional = await refused(() => m.post("/v2/payment/refund", { payment_id: "pi_none", ammount: "1.00" }), 400, "unknown_parameter", "ammount");
    expect(optional.detail).toBe("unknown field: ammount (did you mean amount?)");
    // a short unknown name is not taken for a short field it is not (q, tip)
    const unrelated = await refused(() => api.request("GET", "/v2/payments?external_account_id=acct_err&id=pi_x", { key: m.key }), 400, "unknown_parameter", "id");
    expect(unrelated.detail).toBe("unknown query parameter: id");
    // two letters swapped is one edit: a short name gets its hint (ulr, tpye)
    expect((await refused(() => api.request("GET", "/v2/events?external_account_id=acct_err&tpye=x", { key: m.key }), 400, "unknown_parameter", "tpye")).detail).toBe("unknown query parameter: tpye (did you mean type?)");
    // a field that is the last word of one not sent (a refund's reason sent to a cancel)
    const partOf = await refused(() => m.post("/v2/payment/cancel", { payment_id: "pi_none", reason: "requested_by_customer" }), 400, "unknown_parameter", "reason");
    expect(partOf.detail).toBe("unknown field: reason (did you mean cancellation_reason?)");
    await refused(() => m.post("/v2/payment/intent", { ...intent, amount: true }), 400, "parameter_invalid", "amount");
    // a type or an option said in words: what was expected, what came
    const option = await refused(() => m.post("/v2/payment/intent", { ...intent, capture_method: "Manual" }), 400, "parameter_invalid", "capture_method");
    expect(option.detail).toBe('capture_method: expected one of automatic, manual, got "Manual"');
    const flag = await refused(() => m.post("/v2/payment/intent", { ...intent, allow_saving_card: "yes" }), 400, "parameter_invalid", "allow_saving_card");
    expect(flag.detail).toBe("allow_saving_card: expected a boolean, got a string");
    const reference = await refused(() => m.post("/v2/payment/intent", { ...intent, external_transaction_id: 5 }), 400, "parameter_invalid", "external_transaction_id");
    expect(reference.detail).toBe("external_transaction_id: expected a string, got a number (a numeric reference goes in external_payment_id)");
    const notAnObject = await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: "[]" }), 400, "parameter_invalid", null);
    expect(notAnObject.detail).toBe("body: expected a JSON object, got an array");
    await refused(() => m.post("/v2/payment/intent", { ...intent, external_customer_id: undefined }), 400, "parameter_missing", "external_customer_id");
    await refused(() => m.post("/v2/hardware", { terminal_type: "C_fax" }), 400, "parameter_invalid", "terminal_type");
  });

  it("amounts: too many decimals, not positive, not a number, not finite", async () => {
    for (const amount of ["10.001", 10.001, 0, "0", -5, "-5", "abc", "", "1,00", "NaN", "Infinity", 1e-7, " 10", "10 ", "\t10.5\n"]) {
      const problem = await refused(() => m.post("/v2/payment/intent", { ...intent, amount }), 400, "amount_invalid", "amount");
      expect(problem.detail).toMatch(/^amount: /);
    }
    for (const amount of [null, true, {}, [1]]) {
      const problem = await refused(() => m.post("/v2/payment/intent", { ...intent, amount }), 400, "parameter_invalid", "amount");
      expect(problem.detail).toBe('amount: expected a decimal string such as "25.00", or a number');
    }
    // 1e400 is valid JSON that parses to Infinity: named as out of range, not as "not a number"
    const infinite = await refused(
      () => api.request("POST", "/v2/payment/intent", { key: m.key, raw: JSON.stringify({ ...intent, external_account_id: "acct_err" }).replace('"10.00"', "1E400") }),
      400,
      "amount_invalid",
      "amount",
    );
    expect(infinite.detail).toBe("amount: the JSON number 1E400 is beyond the range of a JSON number");
    // a JSON number with more digits than a double keeps would reach the checks rounded (10.01): refused, never rounded
    const raw = (body: object, literal: string) => JSON.stringify(body).replace('"LITERAL"', literal);
    for (const literal of ["10.0099999999999999", "9999999999.989999", "20.0000000000000001"]) {
      const problem = await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: raw({ ...intent, external_account_id: "acct_err", amount: "LITERAL" }, literal) }), 400, "amount_invalid", "amount");
      expect(problem.detail).toBe(`amount: the JSON number ${literal} has more digits than a JSON number keeps exactly (it would be read as ${Number(literal)}); send it as a string, e.g. "${literal}"`);
    }
    // past every currency's largest amount: that is said, not advice to send it as a string (refused then too)
    const huge = await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: raw({ ...intent, external_account_id: "acct_err", amount: "LITERAL" }, "12345678901234567890") }), 400, "amount_invalid", "amount");
    expect(huge.detail).toBe("amount: 12345678901234567890 is larger than any amount this API takes (12 digits of minor units: at most 9999999999.99 USD, 999999999999 JPY)");
    // the advice is a form the API takes: an amount's string has no exponent
    const tiny = await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: raw({ ...intent, external_account_id: "acct_err", amount: "LITERAL" }, "1.00000000000000000001e-5") }), 400, "amount_invalid", "amount");
    expect(tiny.detail).toMatch(/send it as a string, e\.g\. "0\.0000100000000000000000001"$/);
    const vanishing = await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: raw({ ...intent, external_account_id: "acct_err", amount: "LITERAL" }, "1e-400") }), 400, "amount_invalid", "amount");
    expect(vanishing.detail).toMatch(/send it as a plain decimal string$/);
    // a numeric reference is kept as sent: one written with a fraction or an exponent would not be
    for (const literal of ["100.0", "1e3", "1E3", "-0"]) {
      const written = await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: raw({ ...intent, external_account_id: "acct_err", external_payment_id: "LITERAL" }, literal) }), 400, "parameter_invalid", "external_payment_id");
      expect(written.detail).toBe(`external_payment_id: the JSON number ${literal} would be kept as ${String(Number(literal))}, not as written; send it written as a whole number, or the reference as a string`);
    }
    // a fraction is refused as one (its schema); whole numbers, negative ones and 0 are kept as sent
    const fraction = await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: raw({ ...intent, external_account_id: "acct_err", external_payment_id: "LITERAL" }, "1.5") }), 400, "parameter_invalid", "external_payment_id");
    expect(fraction.detail).toMatch(/must be a whole number/);
    for (const literal of ["0", "-12", "9007199254740991"]) {
      const kept = await api.request("POST", "/v2/payment/intent", { key: m.key, raw: raw({ ...intent, external_account_id: "acct_err", external_payment_id: "LITERAL" }, literal) });
      expect([kept.status, kept.body.external_transaction_id], literal).toEqual([200, Number(literal)]);
    }
    const reference = await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: raw({ ...intent, external_account_id: "acct_err", external_payment_id: "LITERAL" }, "12345678901234567890") }), 400, "parameter_invalid", "external_payment_id");
    expect(reference.detail).toMatch(/^external_payment_id: the JSON number 12345678901234567890 has more digits/);
    // as many digits, held exactly: taken (a card number in a string is no number at all)
    expect((await api.request("POST", "/v2/payment/intent", { key: m.key, raw: raw({ ...intent, external_account_id: "acct_err", amount: "LITERAL", external_payment_id: "4242424242424242" }, "1234567.25") })).status).toBe(200);
    expect((await api.request("POST", "/v2/payment/intent", { key: m.key, raw: raw({ ...intent, external_account_id: "acct_err", amount: "LITERAL" }, "10.000000000000000") })).status).toBe(200);
    // a key given twice: JSON.parse keeps the last, a proxy or a log may read the first: refused, naming it
    const twice = JSON.stringify({ ...intent, external_account_id: "acct_err" }).replace('"amount":"10.00"', '"amount":"1.00","amount":"2.00"');
    const duplicated = await refused(() => api.request("POST", "/v2/payment/intent", { key: m.key, raw: twice }), 400, "parameter_invalid", "amount");
    expect(duplicated.detail).toBe("amount: given twice in one object; send each field once");
    // the same name in two objects (nested, or array items) is no duplicate; an escaped spelling is the same name
    expect(ambiguity('{"a":{"a":1},"b":[{"a":1},{"a":2}],"c":"\\"a\\":"}')).toBeUndefined();
    expect(ambiguity('{"amount":1,"\\u0061mount":2}')?.param).toBe("amount");
    // named by its path: the field given twice, and where
    expect(ambiguity('{"a":[1,{"b":1,"b":2}]}')?.param).toBe("a.1.b");
    expect(ambiguity('{"event_types":["x,y",{"x":{"a":1,"a":2}}]}')?.param).toBe("event_types.1.x.a");
    expect(ambiguity('[{"a":1},{"a":1,"a":2}]')?.param).toBe("1.a");
    expect(ambiguity('{"amount":"1.00","extra":{"a":1,"a":2}}')?.message).toBe("extra.a: given twice in one object; send each field once");
    expect(ambiguity('{"x":{"y":[1]},"b":{"c":2},"b":3}')?.param).toBe("b");
    expect(ambiguity('{"list":[{"v":1},12345678901234567890]}')?.param).toBe("list.1");
    // JPY has no minor units
    const yen = await api.merchant("acct_yen", "A", "JPY");
    await refused(() => yen.post("/v2/payment/intent", { ...intent, amount: "500.5" }), 400, "amount_invalid", "amount");
    expect((await yen.post("/v2/payment/intent", { ...intent, amount: 500 })).status).toBe(200);
  });

  it("amounts: plain decimals only, within the one bound; an amount at the bound goes through every step", async () => {
    for (const amount of ["1e3", "1e400", "2.5E1", "9".repeat(400), "10000000000.00"]) {
      const problem = await refused(() => m.post("/v2/payment/intent", { ...intent, amount }), 400, "amount_invalid", "amount");
      expect(problem.detail).toMatch(/no exponent|at most 9999999999.99 USD/);
    }
    const max = "9999999999.99";
    const { body } = await m.post("/v1/payment/intent", { ...intent, amount: max });
    expect((await m.post("/v1/payment/auth", { payment_id: body.payment_id })).body.status).toBe("requires_capture");
    await refused(() => m.post("/v1/payment/capture", { payment_id: body.payment_id, amount: "10000000000.00" }), 400, "amount_invalid", "amount");
    const captured = await m.post("/v1/payment/capture", { payment_id: body.payment_id, amount: max });
    expect(captured.body).toMatchObject({ status: "success", amount_captured: max });
    expect((await m.post("/v1/payment/refund", { payment_id: body.payment_id })).body).toMatchObject({ amount_refunded: max });
    // a terminal tip may not carry the authorized total past the bound
    const terminal = await m.terminal("A_async");
    const onTerminal = (await m.post("/v2/payment/intent", { amount: max, payment_method_types: "card_present", capture_method: "manual" })).body;
    await m.post("/v2/payment/auth", { payment_id: onTerminal.payment_id, terminal_id: terminal });
    await refused(() => m.post("/sim/terminal/present-card", { terminal_id: terminal, tip: "0.01" }), 400, "amount_invalid", "tip");
    // a tip that is no amount says why (as an amount anywhere else does)
    expect((await refused(() => m.post("/sim/terminal/present-card", { terminal_id: terminal, tip: "-0.50" }), 400, "amount_invalid", "tip")).detail).toBe("tip: must be greater than 0");
    await refused(() => m.post("/sim/terminal/present-card", { terminal_id: terminal, tip: "0.000" }), 400, "amount_invalid", "tip");
    // a tip is an amount as every other: a JSON number too, refused in the same words
    expect((await refused(() => m.post("/sim/terminal/present-card", { terminal_id: terminal, tip: -1 }), 400, "amount_invalid", "tip")).detail).toBe("tip: must be greater than 0");
    await refused(() => m.post("/sim/terminal/present-card", { terminal_id: terminal, tip: 0.01 }), 400, "amount_invalid", "tip");
    expect((await refused(() => m.post("/sim/terminal/present-card", { terminal_id: terminal, tip: null }), 400, "parameter_invalid", "tip")).detail).toMatch(/^tip: expected a decimal string such as "25.00", or a number/);
    const other = await m.terminal("A_async");
    const tipped = (await m.post("/v2/payment/intent", { amount: "10.00", payment_method_types: "card_present", capture_method: "manual" })).body;
    await m.post("/v2/payment/auth", { payment_id: tipped.payment_id, terminal_id: other });
    expect((await m.post("/sim/terminal/present-card", { terminal_id: other, tip: 1.5 })).body).toMatchObject({ status: "requires_capture", tip_amount: "1.50", amount_capturable: "11.50" });
    // the shopper declined to tip: a tip of 0 is no tip
    for (const none of ["0", "0.00", 0]) {
      const untipped = (await m.post("/v2/payment/intent", { amount: "10.00", payment_method_types: "card_present", capture_method: "manual" })).body;
      await m.post("/v2/payment/auth", { payment_id: untipped.payment_id, terminal_id: other });
      expect((await m.post("/sim/terminal/present-card", { terminal_id: other, tip: none })).body).toMatchObject({ status: "requires_capture", amount_capturable: "10.00" });
    }
  });

  it("a terminal's label and serial number, a refund's reason: kept as sent, so white space around a name and control characters are refused", async () => {
    for (const [field, value] of [["label", " Front desk "], ["label", "\u00a0Till"], ["serial_number", "SN-1 "]] as const) {
      expect((await refused(() => m.post("/v2/hardware", { terminal_type: "A_async", [field]: value }), 400, "parameter_invalid", field)).detail).toMatch(/white space around it/);
    }
    for (const field of ["label", "serial_number"]) {
      expect((await refused(() => m.post("/v2/hardware", { terminal_type: "A_async", [field]: "" }), 400, "parameter_invalid", field)).detail).toBe(`${field}: must not be empty (leave it out or send null for none)`);
    }
    expect((await m.post("/v2/hardware", { terminal_type: "A_async", label: "Front desk", serial_number: "SN 1" })).status).toBe(200);
    expect((await m.post("/v2/hardware", { terminal_type: "A_async", label: null, serial_number: null })).body).toMatchObject({ label: null, serial_number: null });
    const { body } = await m.post("/v1/payment/intent", { ...intent, amount: "5.00" });
    await m.post("/v1/payment/auth", { payment_id: body.payment_id });
    await m.post("/v1/payment/capture", { payment_id: body.payment_id, amount: "5.00" });
    const before = (await api.store.readAll()).length;
    expect((await refused(() => m.post("/v2/payment/refund", { payment_id: body.payment_id, amount: "1.00", reason: "a\u001b[31mred" }), 400, "parameter_invalid", "reason")).detail).toMatch(/control character/);
    expect((await api.store.readAll()).length).toBe(before);
    expect((await m.post("/v2/payment/refund", { payment_id: body.payment_id, amount: "1.00", reason: "returned: wrong size" })).status).toBe(200);
  });

  it("a POST's fields come in its body: a query string on a POST is refused, naming the parameter, and nothing is appended", async () => {
    const before = (await api.store.readAll()).length;
    const problem = await refused(() => m.post("/v2/payment/intent?external_account_id=acct_other&foo=1", intent), 400, "unknown_parameter", "external_account_id");
    expect(problem.detail).toBe("unknown query parameters: external_account_id, foo (a POST takes its fields in the JSON body)");
    await refused(() => m.post("/v2/hardware?label=x", { terminal_type: "A_async" }), 400, "unknown_parameter", "label");
    expect((await api.store.readAll()).length).toBe(before);
  });

  it("query parameters: missing, unknown, repeated", async () => {
    await refused(() => api.request("GET", "/v2/payment/intent/pi_1", { key: m.key }), 400, "parameter_missing", "external_account_id");
    await refused(() => api.request("GET", "/v2/payment/intent/pi_1?external_account_id=acct_err&x=1", { key: m.key }), 400, "unknown_parameter", "x");
    const twice = await refused(() => api.request("GET", "/v2/hardware?external_account_id=acct_err&external_account_id=acct_err", { key: m.key }), 400, "parameter_invalid", "external_account_id");
    expect(twice.detail).toBe("external_account_id: given 2 times in the query string; send it once");
    expect((await refused(() => api.request("GET", "/v2/payments?external_account_id=acct_err&limit=1&limit=2", { key: m.key }), 400, "parameter_invalid", "limit")).detail).toMatch(/given 2 times/);
    // not validly percent-encoded: refused as a path is, not read as the text itself
    for (const q of ["q=pct%FF", "q=pct%ZZ", "q=%E0%A4%A"]) {
      const bad = await refused(() => api.request("GET", `/v2/payments?external_account_id=acct_err&${q}`, { key: m.key }), 400, "invalid_url", "q");
      expect(bad.detail).toBe("q: not validly percent-encoded in the query string (UTF-8, each % followed by two hex digits)");
    }
    await refused(() => api.request("GET", "/v2/payments?external_account_id=acct_er%FF", { key: m.key }), 400, "invalid_url", "external_account_id");
    expect((await api.request("GET", "/v2/payments?external_account_id=acct_err&q=pct%25FF", { key: m.key })).status).toBe(200);
    // a path parameter given in the query too: the path's would win, the query's be ignored
    const { body: created } = await m.post("/v2/payment/intent", intent);
    const path = `/v2/payment/intent/${created.payment_id}?external_account_id=acct_err`;
    expect((await api.request("GET", path, { key: m.key })).status).toBe(200);
    const again = await refused(() => api.request("GET", `${path}&payment_id=pi_other`, { key: m.key }), 400, "unknown_parameter", "payment_id");
    expect(again.detail).toBe("unknown query parameter: payment_id (given in the path)");
    // a count is digits: what Number() would also read (hex, exponent, white space, empty) is refused
    for (const limit of ["0x10", "1e1", "%2010", "", "1.5", "0", "101"]) {
      const problem = await refused(() => api.request("GET", `/v2/payments?external_account_id=acct_err&limit=${limit}`, { key: m.key }), 400, "parameter_invalid", "limit");
      expect(problem.detail, limit).toMatch(/whole number from 1 to 100/);
    }
    expect((await api.request("GET", "/v2/payments?external_account_id=acct_err&limit=007", { key: m.key })).status).toBe(200);
  });

  it("a paging cursor too long (or empty, where refused) is 400 worded as the other query parameters: what is expected, what was given", async () => {
    const cases: Array<[string, string, string]> = [
      [`/v2/events?external_account_id=acct_err&after=${"a".repeat(201)}`, "after", "after: expected a next_cursor this endpoint returned (at most 200 characters), got 201 characters"],
      [`/v2/events/stream?external_account_id=acct_err&after=${"a".repeat(250)}`, "after", "after: expected an event's id or a next_cursor this account was given (at most 200 characters), got 250 characters"],
      [`/v2/payments?external_account_id=acct_err&cursor=${"a".repeat(513)}`, "cursor", "cursor: expected the next_cursor of the page before (1 to 512 characters), got 513 characters"],
      ["/v2/payments?external_account_id=acct_err&cursor=", "cursor", "cursor: expected the next_cursor of the page before (1 to 512 characters), got 0 characters"],
    ];
    for (const [path, param, detail] of cases) {
      expect((await refused(() => api.request("GET", path, { key: m.key }), 400, "parameter_invalid", param)).detail, path.slice(0, 40)).toBe(detail);
    }
    // as the route's other parameters are worded
    expect((await refused(() => api.request("GET", "/v2/events?external_account_id=acct_err&limit=0", { key: m.key }), 400, "parameter_invalid", "limit")).detail).toBe("limit: expected a whole number from 1 to 1000, written in digits (e.g. 20)");
    // one of 200 characters is read as a cursor (none this account was given)
    expect((await refused(() => api.request("GET", `/v2/events?external_account_id=acct_err&after=${"a".repeat(200)}`, { key: m.key }), 400, "cursor_invalid", "after")).detail).toMatch(/^after: not a cursor of this account's feed/);
  });

  it("as-of: a timestamp that is not a real date with its offset is 400 naming `timestamp`", async () => {
    const { body } = await m.post("/v2/payment/intent", intent);
    for (const timestamp of ["2026-11-31T00:00:00Z", "2026-01-01T00:00:00"]) {
      await refused(() => m.get(`/v2/payment/intent/${body.payment_id}/as-of?external_account_id=acct_err&timestamp=${encodeURIComponent(timestamp)}`), 400, "parameter_invalid", "timestamp");
    }
  });

  it("a malformed URL, an overlong path parameter", async () => {
    await refused(() => api.request("GET", "/v2/payment/intent/%E0%A4%A?external_account_id=acct_err", { key: m.key }), 400, "invalid_url");
    // past the ids' 255 characters: named by the route; past 1,024, cut by the router
    await refused(() => api.request("GET", `/v2/payment/intent/${"p".repeat(300)}?external_account_id=acct_err`, { key: m.key }), 400, "parameter_invalid", "payment_id");
    expect((await api.request("GET", `/v2/payment/intent/${"p".repeat(255)}?external_account_id=acct_err`, { key: m.key })).status).toBe(404);
    await refused(() => api.request("GET", `/v2/payment/intent/${"p".repeat(1025)}?external_account_id=acct_err`, { key: m.key }), 414, "uri_too_long");
  });

  it("an unknown endpoint, an invalid Idempotency-Key", async () => {
    await refused(() => api.request("GET", "/v3/payment/intent", { key: m.key }), 404, "route_not_found");
    await refused(() => api.request("POST", "/v2/nothing/here", { key: m.key }), 404, "route_not_found");
    await refused(() => m.post("/v2/payment/intent", intent, { "idempotency-key": "k".repeat(256) }), 400, "idempotency_key_invalid", "Idempotency-Key");
  });
});

describe("a wrong method", () => {
  it("is 405 with Allow, not a missing endpoint", async () => {
    for (const [method, path, allow] of [
      ["GET", "/v2/payment/auth", "POST"],
      ["DELETE", "/v2/hardware", "GET, HEAD, POST"],
      ["PUT", "/v2/payment/intent/pi_1", "GET, HEAD"],
    ] as const) {
      let allowHeader: string | null = null;
      const problem = await refused(async () => {
        const res = await api.request(method, path, { key: m.key });
        allowHeader = res.headers.get("allow");
        return res;
      }, 405, "method_not_allowed", null);
      expect(allowHeader).toBe(allow);
      expect(problem.detail).toContain(`${method} is not allowed on ${path}`);
    }
  });

  it("with a body that is empty or not JSON: still 405 or 404, the route is what is wrong", async () => {
    const json = { "content-type": "application/json" };
    for (const raw of ["", "{"]) {
      await refused(() => api.request("DELETE", "/v1/customer/card", { key: m.key, raw, headers: json }), 405, "method_not_allowed", null);
      await refused(() => api.request("PATCH", "/v2/payment/intent/pi_1", { key: m.key, raw, headers: json }), 405, "method_not_allowed", null);
      await refused(() => api.request("POST", "/v2/customer/card", { key: m.key, raw, headers: json }), 404, "route_not_found", null);
    }
    // on a route, the body is what is wrong
    await refused(() => api.request("POST", "/v1/customer/card", { key: m.key, raw: "", headers: json }), 400, "invalid_json", null);
  });
});

describe("what the payment does not allow", () => {
  it("409 with the current status and the allowed next steps", async () => {
    const { body } = await m.post("/v1/payment/intent", intent);
    const problem = await refused(() => m.post("/v1/payment/capture", { payment_id: body.payment_id, amount: "10.00" }), 409, "payment_intent_unexpected_state");
    expect(problem.current_status).toBe("requires_payment_method");
    expect(problem.allowed_next_steps).toEqual(["authorize", "cancel"]);

    await m.post("/v1/payment/auth", { payment_id: body.payment_id });
    await refused(() => m.post("/v1/payment/capture", { payment_id: body.payment_id, amount: "10.01" }), 400, "amount_too_large", "amount");
    await m.post("/v1/payment/capture", { payment_id: body.payment_id, amount: "10.00" });
    const again = await refused(() => m.post("/v1/payment/capture", { payment_id: body.payment_id, amount: "10.00" }), 409, "payment_intent_unexpected_state");
    // each version writes the final success status as its records do: /v1 `success`, /v2 `succeeded`
    expect(again.current_status).toBe("success");
    expect(again.detail).toContain("in status success does not allow capture;");
    expect(again.allowed_next_steps).toEqual(["refund"]);
    const v2 = await refused(() => m.post("/v2/payment/capture", { payment_id: body.payment_id, amount: "10.00" }), 409, "payment_intent_unexpected_state");
    expect(v2).toMatchObject({ current_status: "succeeded", allowed_next_steps: ["refund"] });
    expect(v2.detail).toContain("in status succeeded does not allow capture;");
    await refused(() => m.post("/v1/payment/refund", { payment_id: body.payment_id, amount: "10.01" }), 400, "amount_too_large", "amount");
    await refused(() => m.post("/v1/payment/auth", { payment_id: body.payment_id }), 409, "payment_intent_unexpected_state");
  });

  it("missing resources: payment, terminal, stored card; a wrong client secret", async () => {
    await refused(() => m.read("pi_nope"), 404, "resource_missing", "payment_id");
    await refused(() => m.post("/v2/payment/capture", { payment_id: "pi_nope", amount: 1 }), 404, "resource_missing", "payment_id");
    const { body } = await m.post("/v2/payment/intent", { amount: "5.00", payment_method_types: "card_present", capture_method: "manual" });
    await refused(() => m.post("/v2/payment/auth", { payment_id: body.payment_id, terminal_id: "tmr_nope" }), 404, "resource_missing", "terminal_id");
    await refused(() => m.post("/v2/payment/auth", { payment_id: body.payment_id }), 400, "parameter_missing", "terminal_id");
    await refused(() => m.post("/v2/payment/intent", { ...intent, payment_method_id: "pm_nope" }), 404, "resource_missing", "payment_method_id");
    // a wrong client secret (also one with a multibyte character of the right length) is a credential refused
    await refused(() => api.request("POST", "/v2/sdk/payment-method", { body: { client_secret: `${body.payment_id}_secret_wrong` } }), 401, "unauthorized", "client_secret");
    await refused(() => api.request("POST", "/v2/sdk/payment-method", { body: { client_secret: `pi_nope_secret_${"é".repeat(24)}` } }), 401, "unauthorized", "client_secret");
    await refused(() => m.post("/sim/terminal/present-card", { terminal_id: "tmr_nope" }), 404, "resource_missing", "terminal_id");
  });

  it("a card number the sandbox's processor B does not take, given to its client SDK, is 402 invalid_test_card naming card_number", async () => {
    const b = await api.merchant("acct_b_card", "B");
    const { body } = await b.post("/v2/payment/intent", { amount: "5.00", payment_method_types: "card", capture_method: "manual" });
    // reading the card moves no money: no attempt, nothing appended
    await refused(() => api.request("POST", "/v2/sdk/payment-method", { body: { client_secret: body.client_secret, card_number: "4111111111111111" } }), 402, "invalid_test_card", "card_number");
  });

  it("a card the processor refuses to save is 402, and only the abandoned attempt is appended", async () => {
    const b = await api.merchant("acct_b402", "B");
    const { body } = await b.post("/v2/payment/intent", { amount: "5.00", payment_method_types: "card", capture_method: "manual", allow_saving_card: true });
    // approved (the card form's collect authorizes it), but it expires 02/30: before the 03/30 that card on file needs
    expect((await api.request("POST", "/v2/sdk/payment-method", { body: { client_secret: body.client_secret, card_number: "4000000000000077" } })).body.status).toBe("requires_capture");
    const problem = await refusedByProcessor(() => b.post("/v1/customer/card", { payment_id: body.payment_id, external_customer_id: "c" }), 402, "card_not_savable");
    expect(problem.detail).toContain("03/30");
  });

  it("allow_saving_card false is the shopper's no: with a customer on the intent, the card is not saved (not sent, it is)", async () => {
    const b = await api.merchant("acct_b_consent", "B");
    const reader = (await b.post("/v2/hardware", { terminal_type: "B_reader" })).body.terminal_id;
    const paid = async (allow: { allow_saving_card?: boolean }) => {
      const { body } = await b.post("/v2/payment/intent", { amount: "7.00", payment_method_types: "card_present", capture_method: "automatic", external_customer_id: "cus_no", ...allow });
      expect((await api.request("POST", "/v2/sdk/payment-method", { body: { client_secret: body.client_secret, terminal_id: reader, card_number: "4242424242424242" } })).body.status).toBe("succeeded");
      return body.payment_id as string;
    };
    const declined = await paid({ allow_saving_card: false });
    const count = await eventCount();
    const problem = await refused(() => b.post("/v1/customer/card", { payment_id: declined, external_customer_id: "cus_no" }), 409, "payment_intent_unexpected_state");
    expect(problem.detail).toContain("created with allow_saving_card false: its card may not be saved");
    expect(await eventCount()).toBe(count);
    expect((await b.post("/v1/customer/card", { payment_id: await paid({}), external_customer_id: "cus_no" })).body.payment_method_id).toMatch(/^pm_/);
  });

  it("a card presented while another request cancels the payment: the sandbox's helper answers the payment as it is (canceled), not the refused report's 409", async () => {
    const terminal = await m.terminal("A_async");
    const { payment_id } = (await m.post("/v2/payment/intent", { amount: "5.00", payment_method_types: "card_present", capture_method: "automatic" })).body;
    await m.post("/v2/payment/auth", { payment_id, terminal_id: terminal });
    // the cancel lands between the shopper's card and the terminal's report (as another process's did)
    let first = true;
    api.simulators.connect(async (id, event) => {
      if (first) (first = false), await api.engine.cancel({ external_account_id: "acct_err", payment_id });
      return api.engine.report(id, event);
    });
    try {
      const answer = await m.post("/sim/terminal/present-card", { terminal_id: terminal });
      expect([answer.status, answer.body.status, answer.body.payment_id]).toEqual([200, "canceled", payment_id]);
    } finally {
      api.simulators.connect(api.engine.report);
    }
  });

  it("the shopper and clerk helpers on a processor B reader: 400 naming the client SDK that collects its cards, not an idle terminal", async () => {
    const b = await api.merchant("acct_b_sim", "B");
    const reader = (await b.post("/v2/hardware", { terminal_type: "B_reader" })).body.terminal_id;
    for (const path of ["/sim/terminal/present-card", "/sim/terminal/clerk-cancel"]) {
      const problem = await refused(() => b.post(path, { terminal_id: reader }), 400, "terminal_collects_with_client_sdk", "terminal_id");
      expect(problem.detail).toContain("client SDK");
    }
  });

  it("a busy terminal, an idle terminal, an asynchronous-terminal card that cannot be saved", async () => {
    const terminal = await m.terminal("A_async");
    const first = (await m.post("/v2/payment/intent", { amount: "5.00", payment_method_types: "card_present", capture_method: "automatic" })).body;
    const second = (await m.post("/v2/payment/intent", { amount: "6.00", payment_method_types: "card_present", capture_method: "automatic" })).body;
    await refused(() => m.post("/sim/terminal/present-card", { terminal_id: terminal }), 409, "terminal_idle");
    await m.post("/v2/payment/auth", { payment_id: first.payment_id, terminal_id: terminal });
    await refusedByProcessor(() => m.post("/v2/payment/auth", { payment_id: second.payment_id, terminal_id: terminal }), 409, "terminal_busy");
    // a reference given with a refused authorization is given back: the payment's stays as it was (none, or the one it had)
    const third = (await m.post("/v2/payment/intent", { amount: "7.00", payment_method_types: "card_present", capture_method: "automatic", external_payment_id: "pos-0" })).body;
    for (const [payment, had] of [[second.payment_id, null], [third.payment_id, "pos-0"]] as const) {
      const count = await eventCount();
      expectProblem(await m.post("/v2/payment/auth", { payment_id: payment, terminal_id: terminal, external_payment_id: "pos-busy" }), 409, "terminal_busy", "terminal_id");
      const appended = (await api.store.readAll()).slice(count);
      expect(appended.map((e) => [e.type, (e.data as { external_transaction_id?: unknown }).external_transaction_id])).toEqual([
        ["TransactionReferenceGiven", "pos-busy"],
        ["TerminalAuthorizationAttempted", undefined],
        ["AttemptAbandoned", undefined],
        ["TransactionReferenceGiven", had],
      ]);
      expect((await m.get(`/v2/payment/intent/${payment}?external_account_id=acct_err`)).body.external_transaction_id).toBe(had);
    }
    await refused(() => m.post("/sim/terminal/present-card", { terminal_id: terminal, card_number: "1234567812345678" }), 400, "parameter_invalid", "card_number");
    await m.post("/sim/terminal/present-card", { terminal_id: terminal });
    const problem = await refused(() => m.post("/v1/customer/card", { payment_id: first.payment_id, external_customer_id: "c" }), 409, "payment_intent_unexpected_state");
    expect(problem.detail).toContain("asynchronous terminal type does not support card on file");
  });
});
