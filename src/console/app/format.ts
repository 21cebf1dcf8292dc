// Words and numbers for people: a payment's status in a merchant's words (the machine's state on
// hover), its amounts (authorized, captured, refunded, net), and amounts typed into a form,
// checked by the API's rules before they are sent (positive, finite, no more decimals than the
// currency has, at most what the payment allows). Amounts are compared as integers of minor
// units (BigInt): exact, and no decimal library in the browser bundle.
import type { Payment, PaymentStatus } from "../../client/index.js";

/** The machine's statuses, from the table it is built with (plain data: the bundle carries no xstate). */
export { PAYMENT_STATUSES as STATUSES } from "../../../machines/statuses.js";

export const STATUS_WORDS: Record<PaymentStatus, string> = {
  requires_payment_method: "Incomplete",
  payment_method_requested: "Waiting for the card",
  requires_capture: "Uncaptured",
  capture_requested: "Capturing",
  succeeded: "Succeeded",
  error: "Failed",
  canceled: "Canceled",
};

/** What the badge says: refunds are read from the amounts, as a merchant sees them. */
export function statusWords(p: Pick<Payment, "status" | "amount_refunded" | "amount_captured">): string {
  if (p.status === "succeeded" && minor(p.amount_refunded) > 0n) return minor(p.amount_refunded) >= minor(p.amount_captured) ? "Refunded" : "Partially refunded";
  return STATUS_WORDS[p.status] ?? p.status;
}

/** Decimals of a currency, read from an amount the API wrote in it (it writes the currency's minor units). */
export const decimalsOf = (written: string) => (written.split(".")[1] ?? "").length;

/** "25.00" → 2500n (minor units). Only for amounts the API wrote. */
export function minor(written: string): bigint {
  const [whole = "0", fraction = ""] = written.split(".");
  return BigInt(whole + fraction);
}

/** 2500n, 2 → "25.00" */
export function fromMinor(units: bigint, decimals: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(decimals + 1, "0");
  const text = decimals ? `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}` : digits;
  return negative ? `-${text}` : text;
}

/** Net: captured less refunded, in the payment's currency. */
export const net = (p: Pick<Payment, "amount_captured" | "amount_refunded">) => fromMinor(minor(p.amount_captured) - minor(p.amount_refunded), decimalsOf(p.amount_captured));

/** An amount with its currency code, e.g. "25.00 USD". */
export const money = (amount: string, currency: string) => `${amount} ${currency}`;

export type AmountCheck = { ok: true; amount: string } | { ok: false; problem: string };

/**
 * An amount typed by a person, checked as the API will check it: a positive decimal with no more
 * decimals than `like` (an amount of the same currency the API wrote), and at most `max`.
 */
export function checkAmount(typed: string, { like, max, currency, what }: { like: string; max: string; currency: string; what: string }): AmountCheck {
  const text = typed.trim();
  const decimals = decimalsOf(like);
  if (text === "") return { ok: false, problem: `Enter the amount to ${what}.` };
  if (!/^\d+(\.\d*)?$/.test(text)) return { ok: false, problem: `${JSON.stringify(text)} is not an amount: digits, and a point before the decimals (e.g. ${like}).` };
  const [whole, fraction = ""] = text.split(".");
  if (fraction.length > decimals) return { ok: false, problem: decimals ? `${currency} has ${decimals} decimals; ${text} has ${fraction.length}.` : `${currency} has no decimals.` };
  const units = BigInt(whole! + fraction.padEnd(decimals, "0"));
  if (units <= 0n) return { ok: false, problem: `The amount must be more than 0.` };
  if (units > minor(max)) return { ok: false, problem: `At most ${money(max, currency)} can be ${what === "capture" ? "captured" : "refunded"}.` };
  return { ok: true, amount: fromMinor(units, decimals) };
}
