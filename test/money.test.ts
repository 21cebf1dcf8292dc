import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Decimal, formatAmount, InvalidAmount, MAX_MINOR_UNITS, minorUnits, parseAmount } from "../src/money.js";

describe("money", () => {
  it("knows minor units per currency (ISO 4217)", () => {
    expect([minorUnits("USD"), minorUnits("JPY"), minorUnits("KWD"), minorUnits("EUR")]).toEqual([2, 0, 3, 2]);
    expect(minorUnits("XXX")).toBeUndefined();
    expect(minorUnits("ABC")).toBeUndefined();
  });

  it("formats amounts with the currency's minor units, exactly", () => {
    expect(formatAmount("10", "USD")).toBe("10.00");
    expect(formatAmount("500", "JPY")).toBe("500");
    expect(formatAmount("1.25", "KWD")).toBe("1.250");
    expect(formatAmount(new Decimal("0.1").plus("0.2"), "USD")).toBe("0.30");
  });

  it("parses a JSON string or number, rejecting what is not a positive finite amount in the currency", () => {
    expect(parseAmount("12.34", "USD").toString()).toBe("12.34");
    expect(parseAmount(12.5, "USD").toString()).toBe("12.5");
    expect(parseAmount(" 7 ", "JPY").toString()).toBe("7");
    const reasons = (input: unknown, currency = "USD") => {
      try {
        parseAmount(input, currency);
        return "accepted";
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidAmount);
        return (e as InvalidAmount).reason;
      }
    };
    expect(reasons("1.001")).toMatch(/more than 2 decimal places/);
    expect(reasons("1.5", "JPY")).toMatch(/more than 0 decimal places/);
    expect(reasons("0")).toMatch(/greater than 0/);
    expect(reasons(-5)).toMatch(/greater than 0/);
    expect(reasons(Number.NaN)).toMatch(/finite/);
    expect(reasons(Number.POSITIVE_INFINITY)).toMatch(/finite/);
    expect(reasons("Infinity")).toMatch(/not a decimal number/);
    expect(reasons("1e3")).toBe("accepted");
    expect(reasons("abc")).toMatch(/not a decimal number/);
    expect(reasons(true)).toMatch(/decimal number or string/);
    expect(reasons(null)).toMatch(/decimal number or string/);
  });

  it("round-trips every amount in minor units without loss, up to the bound; refuses above it", () => {
    const max = BigInt(MAX_MINOR_UNITS);
    fc.assert(
      fc.property(fc.oneof(fc.bigInt({ min: 1n, max }), fc.bigInt({ min: max + 1n, max: 10n ** 18n })), fc.constantFrom("USD", "JPY", "KWD"), (minor, currency) => {
        const units = minorUnits(currency)!;
        const text = new Decimal(minor.toString()).dividedBy(new Decimal(10).pow(units)).toFixed(units);
        if (minor > max) expect(() => parseAmount(text, currency)).toThrow(/must be at most/);
        else expect(formatAmount(parseAmount(text, currency), currency)).toBe(text);
      }),
    );
  });
});
