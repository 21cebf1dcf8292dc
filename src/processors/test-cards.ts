// Sandbox test cards and test amounts: each card number, and each test amount, selects one
// deterministic outcome of the simulators, as a payment provider's sandbox does. The table is
// documented in docs/test-cards.md (a test checks that it lists every entry).
import type { Card } from "../../machines/events.js";
import { FAILURES, LAST_ERROR_CODES, type LastErrorCode } from "../../machines/failures.js";
import { Decimal, minorUnits } from "../money.js";

/** What the processor answers when a card is presented or charged. */
export type TestOutcome =
  | { approve: true; /** the capture is requested and settles later (capture_requested) */ captureRequested?: boolean }
  | {
      approve: false;
      last_error: string;
      last_error_code: LastErrorCode | null;
      /** Fails the first attempt of a payment only; a retry with the same card behaves as approving. */
      firstAttemptOnly?: true;
    };

export interface TestCard {
  number: string;
  card: Omit<Card, "type">;
  outcome: TestOutcome;
  avs: { code: number; message: string };
}

const AVS_MATCH = { code: 0, message: "Address and postal code match" };

const card = (brand: string, number: string, exp: [string, number] = ["12", 2030], name: string | null = "TEST CARDHOLDER") => ({
  brand,
  last_4: number.slice(-4),
  exp_month: exp[0],
  exp_year: exp[1],
  cardholder_name: name,
  funding: "credit" as const,
});

const approve = (number: string, brand = "visa", exp?: [string, number], avs = AVS_MATCH): TestCard => ({
  number,
  card: card(brand, number, exp),
  outcome: { approve: true },
  avs,
});

const failure = (code: LastErrorCode | null, last_error?: string): TestOutcome => ({
  approve: false,
  last_error: last_error ?? (code ? FAILURES[code].description : "Declined"),
  last_error_code: code,
});

const fail = (number: string, code: LastErrorCode | null, last_error?: string): TestCard => ({
  number,
  card: card("visa", number),
  outcome: failure(code, last_error),
  avs: AVS_MATCH,
});

const DECLINED = "Your card was declined";
const EXPIRED = "Your card has expired";

export const TEST_CARDS: readonly TestCard[] = [
  approve("4242424242424242"),
  approve("5555555555554444", "mastercard"),
  approve("378282246310005", "amex"),
  // card on file needs an expiry of 03/30 or later (spec §4.8): the first is just in time, the second is not
  approve("4000000000000085", "visa", ["03", 2030]),
  approve("4000000000000077", "visa", ["02", 2030]),
  // approved with address-verification results
  approve("4000000000000010", "visa", undefined, { code: 1, message: "Address matches, postal code does not" }),
  approve("4000000000000028", "visa", undefined, { code: 2, message: "Postal code matches, address does not" }),
  approve("4000000000000036", "visa", undefined, { code: 3, message: "Neither address nor postal code match" }),
  // declines to `error` without a code
  fail("4000000000000002", null, DECLINED),
  fail("4000000000000069", null, EXPIRED),
  // declines the first attempt of a payment, then is approved: "retry with the same card" (spec §7)
  { ...fail("4000000000000259", null, DECLINED), outcome: { approve: false, last_error: DECLINED, last_error_code: null, firstAttemptOnly: true } },
  // one card for every last_error_code of spec §7
  fail("4000000000000101", "API_ERROR"),
  fail("4000000000000119", "APP_ERROR"),
  fail("4000000000000127", "EMV_ERROR"),
  fail("4000000000000135", "OFFLINE_DECLINED"),
  fail("4000000000000143", "ONLINE_DECLINED"),
  fail("4000000000000150", "POS_CANCEL"),
  fail("4000000000000168", "REVERSAL"),
  fail("4000000000000176", "USER_CANCEL"),
  fail("4000000000000184", "USER_TIMEOUT"),
  fail("4000000000000192", "WEB_TIMEOUT"),
];

export const DEFAULT_TEST_CARD = "4242424242424242";

export function testCard(number: string): TestCard | undefined {
  return TEST_CARDS.find((c) => c.number === number.replace(/\s+/g, ""));
}

/** The card that answers with this error code (for tests that walk every §7 code). */
export function cardFailingWith(code: LastErrorCode): TestCard {
  const found = TEST_CARDS.find((c) => !c.outcome.approve && c.outcome.last_error_code === code);
  if (!found) throw new Error(`no test card for ${code}`);
  return found;
}

/**
 * Test amounts, in the currency's minor units (9901 is USD 99.01, JPY 9901, KWD 9.901): with an
 * approving card, the intent's amount selects the outcome. A declining card keeps its own outcome.
 */
export const TEST_AMOUNTS: ReadonlyMap<number, TestOutcome> = new Map<number, TestOutcome>([
  ...LAST_ERROR_CODES.map((code, i) => [9901 + i, failure(code)] as const),
  [9911, failure(null, DECLINED)],
  [9912, failure(null, EXPIRED)],
  [9913, { approve: true, captureRequested: true }],
]);

/** The minor units of a test amount that fails with this code (for tests that walk every §7 code). */
export function amountFailingWith(code: LastErrorCode): number {
  return 9901 + LAST_ERROR_CODES.indexOf(code);
}

/** The outcome a test amount selects, if the amount is one. */
export function testAmount(amount: string, currency: string): TestOutcome | undefined {
  const units = minorUnits(currency);
  if (units === undefined) return undefined;
  return TEST_AMOUNTS.get(new Decimal(amount).times(new Decimal(10).pow(units)).toNumber());
}

/** A test amount written in a currency, e.g. testAmountIn(9913, "USD") -> "99.13". */
export function testAmountIn(minor: number, currency: string): string {
  const units = minorUnits(currency) ?? 2;
  return new Decimal(minor).dividedBy(new Decimal(10).pow(units)).toFixed(units);
}

/** Sandbox tokens of cards on file, usable in a stored-card charge without saving one first. */
export const TEST_PAYMENT_METHODS: Record<string, string> = {
  pm_card_visa: "4242424242424242",
  pm_card_mastercard: "5555555555554444",
  pm_card_declined: "4000000000000002",
  pm_card_declined_once: "4000000000000259",
  pm_card_online_declined: "4000000000000143",
};
