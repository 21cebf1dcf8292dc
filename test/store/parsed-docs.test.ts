// The shared parse of read-model documents (src/store/port/parsed-docs.ts): a document read again
// as the same text is the same frozen object, a changed text is parsed again, and the least
// recently read fall out past the bound.
import { describe, expect, it } from "vitest";
import { parsedDocs } from "../../src/store/port/parsed-docs.js";

describe("parsedDocs", () => {
  it("parses a text once per projection and key, again when the text changed; frozen to the bottom", () => {
    const parse = parsedDocs();
    const a = parse<{ n: number; inner: { list: number[] } }>("p", "k", '{"n":1,"inner":{"list":[1]}}');
    expect(parse("p", "k", '{"n":1,"inner":{"list":[1]}}')).toBe(a);
    expect(parse("q", "k", '{"n":1,"inner":{"list":[1]}}')).not.toBe(a);
    expect([Object.isFrozen(a), Object.isFrozen(a.inner), Object.isFrozen(a.inner.list)]).toEqual([true, true, true]);
    const b = parse<{ n: number }>("p", "k", '{"n":2}');
    expect(b).toEqual({ n: 2 });
    expect(parse("p", "k", '{"n":2}')).toBe(b);
  });

  it("keeps the most recently read: past the bound the least recently read is parsed again", () => {
    const parse = parsedDocs(2);
    const first = { a: parse("p", "a", "[1]"), b: parse("p", "b", "[2]") };
    expect(parse("p", "a", "[1]")).toBe(first.a); // a read again: b is now the least recent
    parse("p", "c", "[3]");
    expect(parse("p", "a", "[1]")).toBe(first.a);
    expect(parse("p", "b", "[2]")).not.toBe(first.b);
  });
});
