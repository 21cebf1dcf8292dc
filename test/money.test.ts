import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Decimal, formatAmount, InvalidAmount, isCurrency, MAX_AMOUNT_MINOR_UNITS, maxAmount, minorUnits, parseAmount } from "../src/money.js";

describe("money", () => {
  it("knows minor units per currency (ISO 4217)", () => {
    expect([minorUnits("USD"), minorUnits("JPY"), minorUnits("KWD"), minorUnits("EUR")]).toEqual([2, 0, 3, 2]);
    expect(minorUnits("XXX")).toBeUndefined();
    expect(minorUnits("ABC")).toBeUndefined();
  });

  it("opens accounts in currencies with minor units only: not metals, SDR or accounting units (ISO 4217 'N.A.')", () => {
    expect(["USD", "JPY", "KWD", "XOF", "XCD", "CLF"].filter(isCurrency)).toEqual(["USD", "JPY", "KWD", "XOF", "XCD", "CLF"]);
    expect(["XAU", "XAG", "XPT", "XPD", "XDR", "XBA", "XSU", "XUA", "XTS", "XXX", "ABC"].filter(isCurrency)).toEqual([]);
    // an account opened in one before keeps folding: its amounts still format
    expect(formatAmount("12", "XAU")).toBe("12");
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
    // the decimals as written, trailing zeros too (README: more decimals than the currency's minor units)
    for (const [text, currency] of [["1.000", "USD"], ["1.50000", "USD"], ["100.00", "JPY"], ["100.0", "JPY"], ["1.0000", "KWD"]] as const) expect(reasons(text, currency), text).toMatch(/more than \d decimal place/);
    // saying so, with the text to send (the same value in the currency's minor units); other digits past them are no such case
    expect(reasons("12.500", "USD")).toBe('has more than 2 decimal places, the minor units of USD (trailing zeros count in an amount\'s text: send "12.50")');
    expect(reasons("100.0", "JPY")).toBe('has more than 0 decimal places, the minor units of JPY (trailing zeros count in an amount\'s text: send "100")');
    expect(reasons("12.501", "USD")).toBe("has more than 2 decimal places, the minor units of USD");
    expect([parseAmount("1.50", "USD").toString(), parseAmount("100", "JPY").toString(), parseAmount("1.500", "KWD").toString()]).toEqual(["1.5", "100", "1.5"]);
    expect(reasons("0")).toMatch(/greater than 0/);
    expect(reasons(-5)).toMatch(/greater than 0/);
    // a JSON number by its value, whatever form String() would write it in
    expect(reasons(0.0000001)).toMatch(/more than 2 decimal places/);
    expect(reasons(1e21)).toMatch(/must be at most 9999999999\.99 USD/);
    expect(parseAmount(1e2, "USD").toString()).toBe("100");
    expect(reasons(Number.NaN)).toMatch(/finite/);
    expect(reasons(Number.POSITIVE_INFINITY)).toMatch(/finite/);
    expect(reasons("Infinity")).toMatch(/not a decimal number/);
    // plain decimals only: an exponent is refused, not expanded ("1e400" is not a 401-digit amount)
    for (const exponent of ["1e3", "1e400", "1E2", "2.5e-1"]) expect(reasons(exponent)).toMatch(/not a decimal number.*no exponent/);
    expect(reasons("+5")).toMatch(/not a decimal number/);
    expect(reasons("25.")).toMatch(/not a decimal number/);
    // exactly the digits: white space around them is refused, not trimmed (README: Money)
    for (const spaced of [" 7", "7 ", "\t10.5 \n"]) expect(reasons(spaced)).toMatch(/white space around it/);
    // one bound, 12 digits of minor units, whatever the currency's minor units
    expect(maxAmount("USD")).toBe("9999999999.99");
    expect(maxAmount("JPY")).toBe("999999999999");
    expect(maxAmount("KWD")).toBe("999999999.999");
    expect(reasons("9999999999.99")).toBe("accepted");
    expect(reasons("10000000000.00")).toMatch(/at most 9999999999.99 USD/);
    expect(reasons("1000000000000", "JPY")).toMatch(/at most 999999999999 JPY/);
    expect(reasons("9".repeat(400))).toMatch(/at most/);
    expect(reasons("abc")).toMatch(/not a decimal number/);
    expect(reasons(true)).toMatch(/decimal number or string/);
    expect(reasons(null)).toMatch(/decimal number or string/);
  });

  it("refuses a code that is not a currency, naming it, with an InvalidAmount", () => {
    const error = (use: () => unknown) => {
      try {
        use();
      } catch (e) {
        return e as Error;
      }
      throw new Error("accepted");
    };
    for (const [use, code] of [[() => parseAmount("1.00", "ABC"), "ABC"], [() => formatAmount("1.00", "XTS"), "XTS"], [() => maxAmount("XXX"), "XXX"]] as const) {
      const e = error(use);
      expect(e).toBeInstanceOf(InvalidAmount);
      expect({ name: e.name, message: e.message }).toEqual({ name: "InvalidAmount", message: `unknown currency ${code}` });
    }
  });

  it("round-trips every amount in minor units up to the bound without loss, and refuses every amount above it", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: BigInt(MAX_AMOUNT_MINOR_UNITS) + 1n, max: 10n ** 40n }), fc.constantFrom("USD", "JPY", "KWD"), (minor, currency) => {
        const text = new Decimal(minor.toString()).dividedBy(new Decimal(10).pow(minorUnits(currency)!)).toFixed(minorUnits(currency)!);
        expect(() => parseAmount(text, currency)).toThrow(/at most/);
      }),
    );
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: BigInt(MAX_AMOUNT_MINOR_UNITS) }), fc.constantFrom("USD", "JPY", "KWD"), (minor, currency) => {
        const units = minorUnits(currency)!;
        const text = new Decimal(minor.toString()).dividedBy(new Decimal(10).pow(units)).toFixed(units);
        expect(formatAmount(parseAmount(text, currency), currency)).toBe(text);
      }),
    );
  });
});
