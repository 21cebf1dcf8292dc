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

const unitsByCode = new Map<string, number | undefined>();

/** ISO 4217 minor units; undefined for a code that is not a currency. Memoized: every fold formats amounts. */
export function minorUnits(currency: string): number | undefined {
  // Stryker disable next-line ConditionalExpression: equivalent, a memo: without it the units are looked up again, the same value
  if (unitsByCode.has(currency)) return unitsByCode.get(currency);
  const entry = currencyCodes.code(currency);
  const units = entry && !["XXX", "XTS"].includes(entry.code) ? entry.digits : undefined;
  if (unitsByCode.size < 1000) unitsByCode.set(currency, units);
  return units;
}

/**
 * ISO 4217 codes whose minor units are "N.A.": precious metals, bond-market and accounting units,
 * SDR, test and no-currency codes. Not money a card is charged in: a new account refuses them
 * (currency-codes gives them 0 digits; accounts opened earlier keep folding).
 */
const NOT_FOR_PAYMENTS = new Set(["XAG", "XAU", "XBA", "XBB", "XBC", "XBD", "XDR", "XPD", "XPT", "XSU", "XTS", "XUA", "XXX"]);

/** A currency a new account may be opened in: an ISO 4217 currency with minor units. */
export function isCurrency(currency: string): boolean {
  return minorUnits(currency) !== undefined && !NOT_FOR_PAYMENTS.has(currency);
}

function unitsOf(currency: string): number {
  const units = minorUnits(currency);
  if (units === undefined) throw new InvalidAmount(`unknown currency ${currency}`);
  return units;
}

/**
 * The largest amount, in minor units, any step carries: 12 digits, the amount field of card
 * networks (ISO 8583 n12), so USD 9,999,999,999.99, JPY 999,999,999,999, KWD 999,999,999.999.
 * Checked on every amount that comes in (create, capture, refund, tip), so an intent that is created
 * can be authorized and captured; sums of a few such amounts stay exact integers (machine guards).
 */
export const MAX_AMOUNT_MINOR_UNITS = 999_999_999_999;

/** The largest amount in a currency, as the canonical string ("9999999999.99" for USD). */
export const maxAmount = (currency: string): string => formatAmount(new Decimal(MAX_AMOUNT_MINOR_UNITS).dividedBy(new Decimal(10).pow(unitsOf(currency))), currency);

/** Plain decimal text only: digits with an optional fraction; no exponent, no sign but "-" (then refused as not positive). */
const PLAIN_AMOUNT = /^-?\d+(\.\d+)?$/;

/**
 * Parses an amount sent by a caller: a JSON number, or a string of digits with an optional decimal
 * point ("25", "25.00"); exponents ("1e3") are refused, not expanded. Rejects what is not positive,
 * more decimals than the currency has (no silent rounding of money), and more than
 * MAX_AMOUNT_MINOR_UNITS.
 */
export function parseAmount(input: unknown, currency: string): Decimal {
  if (typeof input === "number" && !Number.isFinite(input)) throw new InvalidAmount("must be a finite number");
  if (typeof input !== "string" && typeof input !== "number") throw new InvalidAmount("must be a decimal number or string");
  // a JSON number is judged by its value: String() would write 1e-7 and 1e21 in exponent form
  const text = typeof input === "number" ? new Decimal(input).toFixed() : input;
  if (text !== text.trim()) throw new InvalidAmount(`${JSON.stringify(input)} has white space around it: send digits and an optional decimal point only, e.g. "25.00"`);
  if (!PLAIN_AMOUNT.test(text)) throw new InvalidAmount(`"${String(input)}" is not a decimal number: digits and an optional decimal point, e.g. "25.00" (no exponent)`);
  const value = new Decimal(text);
  if (!value.greaterThan(0)) throw new InvalidAmount("must be greater than 0");
  const units = unitsOf(currency);
  // the decimals written, trailing zeros included: "1.500" is three, more than USD has (as "1.5001" is)
  const point = text.indexOf(".");
  if (point >= 0 && text.length - point - 1 > units) {
    // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent, no ISO 4217 currency has 1 minor unit (currency-codes' data)
    const written = `has more than ${units} decimal place${units === 1 ? "" : "s"}, the minor units of ${currency}`;
    // only zeros past them: the same value, but written finer than the currency counts (a unit mix-up shows so)
    const exact = value.toFixed(units);
    throw new InvalidAmount(value.equals(exact) ? `${written} (trailing zeros count in an amount's text: send "${exact}")` : written);
  }
  if (value.times(new Decimal(10).pow(units)).greaterThan(MAX_AMOUNT_MINOR_UNITS)) {
    throw new InvalidAmount(`must be at most ${maxAmount(currency)} ${currency} (12 digits of minor units, what card networks carry)`);
  }
  return value;
}

/** Canonical amount strings per number of minor units: "0", "12", "0.00", "12.50" (no sign, no leading zero). */
const CANONICAL = [0, 1, 2, 3, 4].map((units) => new RegExp(units ? `^(0|[1-9]\\d*)\\.\\d{${units}}$` : "^(0|[1-9]\\d*)$"));

const ZEROS: string[] = [];

/**
 * The canonical string of an amount in a currency: fixed minor units, no exponent. A string that
 * already is canonical is returned as is (what toFixed would give), sparing the folds a Decimal.
 */
export function formatAmount(value: DecimalValue, currency: string): string {
  const units = unitsOf(currency);
  if (value === 0) return (ZEROS[units] ??= new Decimal(0).toFixed(units));
  // Stryker disable next-line ConditionalExpression,StringLiteral,OptionalChaining: equivalent, a shortcut: toFixed gives the same string; CANONICAL covers 0-4 units, every currency's
  if (typeof value === "string" && CANONICAL[units]?.test(value)) return value;
  return (value instanceof Decimal ? value : new Decimal(value)).toFixed(units);
}

/**
 * Plain decimal text ("12", "12.50", "0.005") as [integer, scale] with integer / 10^scale equal
 * to it, when the integer is exact in a double (15 digits); null otherwise (Decimal decides).
 */
function scaled(text: string): [number, number] | null {
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: equivalent, a wider guard is caught by aligned's safe-integer checks, a narrower one falls back to Decimal
  if (text.length > 16 || !PLAIN.test(text)) return null;
  const dot = text.indexOf(".");
  // Stryker disable next-line ArrayDeclaration: equivalent, [] makes aligned compute NaN, not a safe integer: Decimal decides
  if (dot < 0) return [Number(text), 0];
  // Stryker disable next-line ArrayDeclaration: equivalent, as above
  return [Number(text.slice(0, dot) + text.slice(dot + 1)), text.length - dot - 1];
}
const PLAIN = /^\d+(\.\d+)?$/;
const POW10 = Array.from({ length: 16 }, (_, i) => 10 ** i);

/** Both amounts as integers of the same scale, when that stays exact; null otherwise. */
function aligned(a: string, b: string): [number, number, number] | null {
  const x = scaled(a);
  const y = scaled(b);
  if (!x || !y) return null;
  // Stryker disable next-line MethodExpression: equivalent, Math.min leaves POW10 of a negative index undefined (NaN): Decimal decides
  const scale = Math.max(x[1], y[1]);
  const m = x[0] * POW10[scale - x[1]]!;
  const n = y[0] * POW10[scale - y[1]]!;
  // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent, for m, n ≥ 0 a safe m + n implies safe m and n; false falls back to Decimal
  return Number.isSafeInteger(m) && Number.isSafeInteger(n) && Number.isSafeInteger(m + n) ? [m, n, scale] : null;
}

const textOf = (n: number, scale: number): string => {
  if (scale === 0) return String(n);
  const digits = String(n).padStart(scale + 1, "0");
  return `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
};

/**
 * Exact arithmetic on amount strings, as the machine's guards need it on every event: plain
 * integers when the amounts are short decimals (always, for real amounts), Decimal otherwise.
 */
export const amounts = {
  /** -1, 0 or 1 as a is below, equal to or above b. */
  compare(a: string, b: string): number {
    const ab = aligned(a, b);
    if (ab) return Math.sign(ab[0] - ab[1]);
    return new Decimal(a).comparedTo(b);
  },
  /** The sum, as plain decimal text (not yet in the currency's format). */
  sum(a: string, b: string): string {
    const ab = aligned(a, b);
    return ab ? textOf(ab[0] + ab[1], ab[2]) : new Decimal(a).plus(b).toFixed();
  },
  /** a − b, as plain decimal text (integers for a ≥ b, Decimal for a negative result). */
  difference(a: string, b: string): string {
    const ab = aligned(a, b);
    // Stryker disable next-line EqualityOperator: equivalent, > and < only send more cases to Decimal, the same value
    return ab && ab[0] >= ab[1] ? textOf(ab[0] - ab[1], ab[2]) : new Decimal(a).minus(b).toFixed();
  },
};

export const zero = (currency: string): string => formatAmount(0, currency);

/** Arithmetic on canonical amount strings, kept in the currency's format. */
export const money = {
  add: (a: string, b: string, currency: string) => formatAmount(new Decimal(a).plus(b), currency),
  sub: (a: string, b: string, currency: string) => formatAmount(new Decimal(a).minus(b), currency),
  lte: (a: DecimalValue, b: DecimalValue) => new Decimal(a).lessThanOrEqualTo(b),
  eq: (a: DecimalValue, b: DecimalValue) => new Decimal(a).equals(b),
  isPositive: (a: DecimalValue) => new Decimal(a).greaterThan(0),
};
