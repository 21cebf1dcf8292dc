// Sandbox test cards: each card number selects one deterministic outcome of the simulators, as
// a payment provider's sandbox does. The table is documented in docs/test-cards.md.
import type { Card } from "../../machines/events.js";
import { FAILURES, type LastErrorCode } from "../../machines/failures.js";

export interface TestCard {
  number: string;
  card: Omit<Card, "type">;
  /** What the processor answers when this card is presented or charged. */
  outcome: { approve: true } | { approve: false; last_error: string; last_error_code: LastErrorCode | null };
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

const fail = (number: string, code: LastErrorCode | null, last_error?: string): TestCard => ({
  number,
  card: card("visa", number),
  outcome: { approve: false, last_error: last_error ?? (code ? FAILURES[code].description : "Declined"), last_error_code: code },
  avs: AVS_MATCH,
});

export const TEST_CARDS: readonly TestCard[] = [
  approve("4242424242424242"),
  approve("5555555555554444", "mastercard"),
  approve("378282246310005", "amex"),
  // approved, but expires before 03/30: cannot be saved on file (spec §4.8)
  approve("4000000000000077", "visa", ["02", 2030]),
  // approved with address-verification results
  approve("4000000000000010", "visa", undefined, { code: 1, message: "Address matches, postal code does not" }),
  approve("4000000000000028", "visa", undefined, { code: 2, message: "Postal code matches, address does not" }),
  approve("4000000000000036", "visa", undefined, { code: 3, message: "Neither address nor postal code match" }),
  // declines and errors: one card for every last_error_code of spec §7
  fail("4000000000000002", null, "Your card was declined"),
  fail("4000000000000069", null, "Your card has expired"),
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

/** Sandbox tokens of cards on file, usable in a stored-card charge without saving one first. */
export const TEST_PAYMENT_METHODS: Record<string, string> = {
  pm_card_visa: "4242424242424242",
  pm_card_mastercard: "5555555555554444",
  pm_card_declined: "4000000000000002",
  pm_card_online_declined: "4000000000000143",
};
