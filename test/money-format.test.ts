// The money shortcuts the machine's guards run on every event must give exactly what Decimal
// gives: formatAmount (a canonical string returned as is, zero from a table) and the integer
// arithmetic of `amounts` (compare, sum, difference), on short and long amounts alike.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { amounts, Decimal, formatAmount, minorUnits } from "../src/money.js";

const plain = fc.oneof(
  fc.tuple(fc.nat({ max: 10 ** 9 }), fc.stringMatching(/^\d{0,5}$/)).map(([i, f]) => (f ? `${i}.${f}` : `${i}`)),
  fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.stringMatching(/^\d{0,12}$/)).map(([i, f]) => (f ? `${i}.${f}` : `${i}`)),
  fc.constantFrom("0", "00.10", "010", "0.0", "12.50", "12.5", "9007199254740993", "999999999999999.9"),
);
const odd = fc.constantFrom("1e3", "5.", ".5", "-0.00", "-3.50", "999999999999999999999.995");
const currency = fc.constantFrom("USD", "JPY", "KWD", "CLF", "EUR", "BHD");

describe("money shortcuts", () => {
  it("formatAmount formats exactly as Decimal#toFixed with the currency's minor units", () => {
    fc.assert(
      fc.property(fc.oneof(plain, odd), currency, (text, code) => {
        const units = minorUnits(code)!;
        expect(formatAmount(text, code)).toBe(new Decimal(text).toFixed(units));
        expect(formatAmount(0, code)).toBe(new Decimal(0).toFixed(units));
      }),
      { numRuns: 2000 },
    );
  });

  it("amounts compare, add and subtract exactly as Decimal does", () => {
    fc.assert(
      fc.property(plain, plain, (a, b) => {
        const [x, y] = [new Decimal(a), new Decimal(b)];
        expect(amounts.compare(a, b)).toBe(x.comparedTo(y));
        expect(new Decimal(amounts.sum(a, b)).equals(x.plus(y))).toBe(true);
        expect(new Decimal(amounts.difference(a, b)).equals(x.minus(y))).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it("a difference below zero is exact too (the integer shortcut is for a ≥ b)", () => {
    for (const [a, b, expected] of [["0.05", "0.10", "-0.05"], ["12.50", "100.00", "-87.5"], ["0", "0.001", "-0.001"]] as const) {
      expect(new Decimal(amounts.difference(a, b)).equals(expected), `${a} - ${b}`).toBe(true);
    }
  });

  it("a sum past 2^53 is exact (the integer shortcut is only for sums a double holds exactly)", () => {
    expect(amounts.sum("9007199254740991", "2")).toBe("9007199254740993");
    expect(amounts.sum("90071992547409.91", "0.02")).toBe("90071992547409.93");
  });
});
