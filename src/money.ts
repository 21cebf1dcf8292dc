// Money is decimal.js, never a float. Amounts leave as strings with the currency's minor units
// (USD "10.00", JPY "500", KWD "1.250") and come in as a JSON string or number (spec §2.1).
import { Decimal as DecimalJs } from "decimal.js";
import currencyCodes from "currency-codes";

/** A private Decimal constructor: enough precision for any amount, no global configuration touched. */
export const Decimal = DecimalJs.clone({ precision: 40, rounding: DecimalJs.ROUND_HALF_EVEN, toExpNeg: -40, toExpPos: 40 });
export type Decimal = DecimalJs;
type DecimalValue = DecimalJs.Value;

export class InvalidAmount extends Error {
  override readonly name = "InvalidAmount";
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** ISO 4217 minor units; undefined for a code that is not a currency. */
export function minorUnits(currency: string): number | undefined {
  const entry = currencyCodes.code(currency);
  return entry && !["XXX", "XTS"].includes(entry.code) ? entry.digits : undefined;
}

export function isCurrency(currency: string): boolean {
  return minorUnits(currency) !== undefined;
}

function unitsOf(currency: string): number {
  const units = minorUnits(currency);
  if (units === undefined) throw new InvalidAmount(`unknown currency ${currency}`);
  return units;
}

/**
 * Parses an amount sent by a caller. Rejects what is not a finite positive number, and more
 * decimals than the currency has (no silent rounding of money).
 */
export function parseAmount(input: unknown, currency: string): Decimal {
  if (typeof input === "number" && !Number.isFinite(input)) throw new InvalidAmount("must be a finite number");
  if (typeof input !== "string" && typeof input !== "number") throw new InvalidAmount("must be a decimal number or string");
  const text = typeof input === "number" ? String(input) : input.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new InvalidAmount(`"${String(input)}" is not a decimal number`);
  const value = new Decimal(text);
  if (!value.isFinite()) throw new InvalidAmount("must be finite");
  if (!value.greaterThan(0)) throw new InvalidAmount("must be greater than 0");
  const units = unitsOf(currency);
  if (value.decimalPlaces() > units) {
    throw new InvalidAmount(`has more than ${units} decimal place${units === 1 ? "" : "s"}, the minor units of ${currency}`);
  }
  return value;
}

/** The canonical string of an amount in a currency: fixed minor units, no exponent. */
export function formatAmount(value: DecimalValue, currency: string): string {
  return new Decimal(value).toFixed(unitsOf(currency));
}

export const zero = (currency: string): string => formatAmount(0, currency);

/** Arithmetic on canonical amount strings, kept in the currency's format. */
export const money = {
  add: (a: string, b: string, currency: string) => formatAmount(new Decimal(a).plus(b), currency),
  sub: (a: string, b: string, currency: string) => formatAmount(new Decimal(a).minus(b), currency),
  lte: (a: DecimalValue, b: DecimalValue) => new Decimal(a).lessThanOrEqualTo(b),
  eq: (a: DecimalValue, b: DecimalValue) => new Decimal(a).equals(b),
  isPositive: (a: DecimalValue) => new Decimal(a).greaterThan(0),
};
