// verifyWebhook against a fixed vector (secret, timestamp, raw body → header, computed once with
// an independent HMAC-SHA256 and written out here), so a signer or verifier that drifts, or a
// comparison of only a prefix of the signature, fails; and the calls it refuses outright.
import { describe, expect, it } from "vitest";
import { signatureHeader, verifyWebhook } from "../../src/webhooks/signature.js";

const SECRET = "whsec_test_vector_secret";
const T = 1_700_000_000;
const BODY = '{"id":"evt_1","type":"payment_intent.created"}';
const SIGNATURE = "9aadeb8245db70ead6f6c4194e8a406d0fef1375952d405563875d023e8d18ff";
const HEADER = `t=${T},v1=${SIGNATURE}`;
const now = T * 1000 + 10_000;

describe("verifyWebhook: the fixed vector", () => {
  it("signs the vector's body at its time into exactly the vector's header, and verifies it", () => {
    expect(signatureHeader(SECRET, BODY, T * 1000 + 999)).toBe(HEADER);
    expect(verifyWebhook(BODY, HEADER, SECRET, { now })).toBe(true);
    expect(verifyWebhook(Buffer.from(BODY), HEADER, SECRET, { now })).toBe(true);
  });

  it("refuses every signature but the exact one: a prefix, the last digit changed, another body, secret or time", () => {
    expect(verifyWebhook(BODY, `t=${T},v1=${SIGNATURE.slice(0, 32)}`, SECRET, { now })).toBe(false);
    expect(verifyWebhook(BODY, `t=${T},v1=${SIGNATURE.slice(0, 63)}`, SECRET, { now })).toBe(false);
    expect(verifyWebhook(BODY, `t=${T},v1=${SIGNATURE.slice(0, 63)}${SIGNATURE.endsWith("f") ? "e" : "f"}`, SECRET, { now })).toBe(false);
    expect(verifyWebhook(BODY, `t=${T},v1=${SIGNATURE}00`, SECRET, { now })).toBe(false);
    expect(verifyWebhook(BODY, `t=${T},v1=`, SECRET, { now })).toBe(false);
    expect(verifyWebhook(BODY.replace("evt_1", "evt_2"), HEADER, SECRET, { now })).toBe(false);
    expect(verifyWebhook(BODY, HEADER, `${SECRET}x`, { now })).toBe(false);
    expect(verifyWebhook(BODY, `t=${T + 1},v1=${SIGNATURE}`, SECRET, { now })).toBe(false);
    // several v1 entries: any exact one verifies
    expect(verifyWebhook(BODY, `t=${T},v1=${"0".repeat(64)},v1=${SIGNATURE}`, SECRET, { now })).toBe(true);
  });

  it("the tolerance: inside passes, outside fails, 0 means the same second only", () => {
    expect(verifyWebhook(BODY, HEADER, SECRET, { now: T * 1000 + 300_000 })).toBe(true);
    expect(verifyWebhook(BODY, HEADER, SECRET, { now: T * 1000 + 301_000 })).toBe(false);
    expect(verifyWebhook(BODY, HEADER, SECRET, { now: T * 1000 - 301_000 })).toBe(false);
    expect(verifyWebhook(BODY, HEADER, SECRET, { now: T * 1000, toleranceSeconds: 0 })).toBe(true);
    // later in that second too (t is written in whole seconds: the fraction made every age over 0)
    expect(verifyWebhook(BODY, HEADER, SECRET, { now: T * 1000 + 999, toleranceSeconds: 0 })).toBe(true);
    expect(verifyWebhook(BODY, HEADER, SECRET, { now: T * 1000 + 300_999 })).toBe(true);
    expect(verifyWebhook(BODY, HEADER, SECRET, { now: T * 1000 + 1_000, toleranceSeconds: 0 })).toBe(false);
  });
});

describe("verifyWebhook refuses calls that could only pass by mistake", () => {
  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1, -0.5])("tolerance %s throws a RangeError", (toleranceSeconds) => {
    expect(() => verifyWebhook(BODY, HEADER, SECRET, { now, toleranceSeconds })).toThrow(RangeError);
  });

  it("a tolerance that is not a number, a non-finite now, and an empty secret throw", () => {
    expect(() => verifyWebhook(BODY, HEADER, SECRET, { now, toleranceSeconds: "300" as unknown as number })).toThrow(RangeError);
    expect(() => verifyWebhook(BODY, HEADER, SECRET, { now: Number.NaN })).toThrow(RangeError);
    expect(() => verifyWebhook(BODY, HEADER, "", { now })).toThrow(TypeError);
    // an empty secret throws even with a header signed with it
    expect(() => verifyWebhook(BODY, signatureHeader("", BODY, now), "", { now })).toThrow(/secret is empty/);
  });
});
