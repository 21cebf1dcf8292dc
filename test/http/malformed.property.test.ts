// Property: a malformed request on any endpoint (invalid JSON, a body that is not an object, an
// unknown field, a field missing, a field of the wrong type or value, a bad amount, bad query
// parameters) is a 4xx problem+json, never a 5xx, and appends nothing to the store.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProblemOut } from "../../src/http/schemas.js";
import { startApi, type Api, type Merchant } from "./harness.js";

let api: Api;
let m: Merchant;
type Kind = "id" | "amount" | "ref" | "bool" | { enum: readonly string[] };
interface Endpoint {
  path: string;
  auth: boolean;
  /** A valid body: each property test run breaks it in exactly one way. */
  body: Record<string, unknown>;
  kinds: Record<string, Kind>;
  required: string[];
}
let endpoints: Endpoint[] = [];

beforeAll(async () => {
  api = await startApi();
  m = await api.merchant("acct_p");
  const terminal = await m.terminal("A_async");
  const b = await api.merchant("acct_pb", "B");
  const reader = await b.terminal("B_reader");
  const capturable = (await m.post("/v1/payment/intent", { amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c" })).body.payment_id;
  await m.post("/v1/payment/auth", { payment_id: capturable });
  const present = (await m.post("/v2/payment/intent", { amount: "10.00", payment_method_types: "card_present", capture_method: "manual" })).body.payment_id;
  await m.post("/v2/payment/auth", { payment_id: present, terminal_id: terminal });
  const secret = (await b.post("/v2/payment/intent", { amount: "10.00", payment_method_types: "card_present", capture_method: "manual" })).body.client_secret;

  const acct = "acct_p";
  const ids = (...names: string[]) => Object.fromEntries(names.map((n) => [n, "id" as Kind]));
  const intent: Endpoint = {
    path: "/v2/payment/intent",
    auth: true,
    body: { external_account_id: acct, amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c", external_payment_id: 5, allow_saving_card: false },
    kinds: { ...ids("external_account_id", "payment_method_id", "external_customer_id"), amount: "amount", payment_method_types: { enum: ["card", "card_present"] }, capture_method: { enum: ["automatic", "manual"] }, external_payment_id: "ref", allow_saving_card: "bool" },
    required: ["external_account_id", "amount", "payment_method_types", "capture_method"],
  };
  const ref = { external_account_id: acct, payment_id: capturable };
  endpoints = [
    intent,
    { ...intent, path: "/v1/payment/intent" },
    { path: "/v2/payment/auth", auth: true, body: { external_account_id: acct, payment_id: present, terminal_id: terminal }, kinds: ids("external_account_id", "payment_id", "terminal_id"), required: ["external_account_id", "payment_id"] },
    { path: "/v1/payment/capture", auth: true, body: { ...ref, amount: "10.00" }, kinds: { ...ids("external_account_id", "payment_id"), amount: "amount" }, required: ["external_account_id", "payment_id", "amount"] },
    { path: "/v2/payment/capture", auth: true, body: { ...ref, amount: 10 }, kinds: { ...ids("external_account_id", "payment_id"), amount: "amount" }, required: ["external_account_id", "payment_id", "amount"] },
    { path: "/v2/payment/cancel", auth: true, body: { ...ref, cancellation_reason: "duplicate" }, kinds: { ...ids("external_account_id", "payment_id"), cancellation_reason: { enum: ["requested_by_customer", "duplicate", "fraudulent", "abandoned"] } }, required: ["external_account_id", "payment_id"] },
    { path: "/v1/payment/refund", auth: true, body: { ...ref, amount: "1.00" }, kinds: { ...ids("external_account_id", "payment_id"), amount: "amount" }, required: ["external_account_id", "payment_id"] },
    { path: "/v1/customer/card", auth: true, body: { ...ref, external_customer_id: "c" }, kinds: ids("external_account_id", "payment_id", "external_customer_id"), required: ["external_account_id", "payment_id", "external_customer_id"] },
    { path: "/v2/hardware", auth: true, body: { external_account_id: acct, terminal_type: "A_sync" }, kinds: { external_account_id: "id", terminal_type: { enum: ["A_async", "A_sync", "B_reader"] } }, required: ["external_account_id", "terminal_type"] },
    { path: "/sim/terminal/present-card", auth: true, body: { external_account_id: acct, terminal_id: terminal, card_number: "4242424242424242" }, kinds: ids("external_account_id", "terminal_id"), required: ["external_account_id", "terminal_id"] },
    { path: "/sim/terminal/clerk-cancel", auth: true, body: { external_account_id: acct, terminal_id: terminal }, kinds: ids("external_account_id", "terminal_id"), required: ["external_account_id", "terminal_id"] },
    { path: "/v2/sdk/payment-method", auth: false, body: { client_secret: secret, terminal_id: reader }, kinds: { client_secret: "id", terminal_id: "id" }, required: ["client_secret"] },
    { path: "/v2/sdk/process-payment", auth: false, body: { client_secret: secret }, kinds: { client_secret: "id" }, required: ["client_secret"] },
  ];
});
afterAll(async () => {
  await api.close();
});

const notJson = fc.string().filter((s) => {
  try {
    JSON.parse(s);
    return false;
  } catch {
    return true;
  }
});
const notObject = fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.constant(null), fc.array(fc.jsonValue()));
const nonString = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.array(fc.string()), fc.dictionary(fc.string(), fc.string()));
/** Values of the wrong type or out of range for a field of this kind. */
function wrongFor(kind: Kind): fc.Arbitrary<unknown> {
  // kept exactly as sent, so refused rather than trimmed or mangled: white space around it, control characters, lone surrogates
  const unkeepable = fc.oneof(fc.constantFrom(" acct", "acct ", "\tx", "a\u0000b", "x\u001f", "a\u0085b", "x\u009f", "\ud800", "a\udfffb"), fc.tuple(fc.string(), fc.constantFrom(" ", "\n", "\u0000", "\ud83d")).map(([s, bad]) => `${bad}${s}`));
  if (kind === "id") return fc.oneof(nonString, unkeepable, fc.constantFrom("", "   "), fc.string({ minLength: 256, maxLength: 300 }).filter((s) => s.trim().length > 255));
  if (kind === "amount")
    return fc.oneof(
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.integer()),
      fc.object(),
      fc.constantFrom("abc", "1.001", "-5", "0", "0.00", "", " ", "1,00", "NaN", "Infinity", "0x10", "1e-9"),
      fc.integer({ max: 0 }),
      fc.double({ min: 0.0001, max: 1000, noNaN: true }).filter((d) => !/^\d+(\.\d{1,2})?$/.test(String(d))),
    );
  // a number reference is a whole number (a fraction may have lost digits when parsed)
  if (kind === "ref") return fc.oneof(fc.boolean(), fc.constant(null), fc.array(fc.integer()), fc.object(), fc.constant(""), unkeepable, fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isSafeInteger(d)));
  if (kind === "bool") return fc.oneof(fc.string(), fc.integer(), fc.constant(null));
  return fc.oneof(fc.string().filter((s) => !kind.enum.includes(s)), fc.integer(), fc.constant(null));
}

/** One way of breaking a valid body: a raw text to send. */
function broken(e: Endpoint): fc.Arbitrary<string> {
  const fields = Object.keys(e.kinds);
  return fc.oneof(
    notJson,
    notObject.map((v) => JSON.stringify(v)),
    fc.string({ minLength: 1 }).filter((k) => !(k in e.kinds) && k !== "__proto__" && k !== "constructor").chain((k) => fc.jsonValue().map((v) => JSON.stringify({ ...e.body, [k]: v }))),
    fc.constantFrom(...e.required.filter((f) => f in e.body)).map((f) => {
      const { [f]: _gone, ...rest } = e.body;
      return JSON.stringify(rest);
    }),
    // null is wrong only for a required field or an amount: an optional one sent as null is not sent (src/inputs.ts)
    fc.constantFrom(...fields).chain((f) => wrongFor(e.kinds[f]!).filter((v) => v !== null || e.required.includes(f) || e.kinds[f] === "amount").map((v) => JSON.stringify({ ...e.body, [f]: v }))),
  );
}

async function snapshot() {
  const events = await api.store.readAll();
  return events.length;
}

describe("malformed requests never give a 5xx and never append", () => {
  it("on every POST endpoint", async () => {
    for (const e of endpoints) {
      await fc.assert(
        fc.asyncProperty(broken(e), async (raw) => {
          const before = await snapshot();
          const res = await api.request("POST", e.path, { key: e.auth ? m.key : null, raw });
          expect(res.status, `${e.path} ${raw}`).toBeGreaterThanOrEqual(400);
          expect(res.status, `${e.path} ${raw}`).toBeLessThan(500);
          expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
          ProblemOut.parse(res.body);
          expect(await snapshot(), `${e.path} ${raw}`).toBe(before);
        }),
        { numRuns: 60 },
      );
    }
  });

  it("on every GET endpoint, with random query parameters", async () => {
    const segment = fc.oneof(fc.constant("pi_x"), fc.string({ minLength: 1, maxLength: 300 }).map(encodeURIComponent), fc.constantFrom("%E0%A4%A", "%", "a%00b", "%2F"));
    const paths = fc.oneof(segment.map((id) => `/v2/payment/intent/${id}`), fc.constantFrom("/v2/hardware", "/v1/customer/card"));
    await fc.assert(
      fc.asyncProperty(paths, fc.dictionary(fc.string({ minLength: 1 }), fc.oneof(fc.string(), fc.array(fc.string(), { minLength: 2, maxLength: 3 }))), async (path, query) => {
        const params = new URLSearchParams();
        for (const [k, v] of Object.entries(query)) for (const one of [v].flat()) params.append(k, one);
        const before = await snapshot();
        const res = await api.request("GET", `${path}?${params}`, { key: m.key });
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
          ProblemOut.parse(res.body);
        }
        expect(await snapshot()).toBe(before);
      }),
      { numRuns: 200 },
    );
  });
});
