import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/events/canonical-json.js";

const reversedKeys = (v: unknown): unknown =>
  v === null || typeof v !== "object" ? v : Array.isArray(v) ? v.map(reversedKeys) : Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reversedKeys(x)]));

describe("canonicalJson", () => {
  it("is JSON of the same value, whatever the key order", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(JSON.parse(canonicalJson(v))).toEqual(JSON.parse(JSON.stringify(v)));
        expect(canonicalJson(reversedKeys(v))).toBe(canonicalJson(v));
      }),
    );
  });

  it("writes every string, keys included, as JSON.stringify does (escapes, lone surrogates)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" }), (s, t) => {
        expect(canonicalJson(s)).toBe(JSON.stringify(s));
        expect(canonicalJson({ [s]: [t, s] })).toBe(JSON.stringify({ [s]: [t, s] }));
      }),
    );
    for (const s of ['"', "\\", "\u0000\u001f\u007f", "\u2028", "\ud800", "a\udfffb", "😀", "\n\t"]) expect(canonicalJson(s)).toBe(JSON.stringify(s));
  });

  it("sorts keys at every level and drops undefined, as JSON does", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: undefined }], c: null }, "10": "x", "9": true })).toBe('{"10":"x","9":true,"a":{"c":null,"d":[1,{"z":1}]},"b":1}');
  });
});
