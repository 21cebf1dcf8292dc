// Expected values of spec §7, written out here by hand (never read from machines/failures.ts or
// src/processors/test-cards.ts, the tables under test):
// - code and description: the §7 table;
// - status: §7 "Status-based failures" and §3: a timeout or a cancellation leaves the payment in
//   requires_payment_method; a decline or a processing failure puts it in error;
// - card and amount: the sandbox's documented test card and USD test amount for each code
//   (docs/test-cards.md).
export interface SpecError {
  code: string;
  description: string;
  status: "requires_payment_method" | "error";
  card: string;
  usd: string;
}

export const SPEC_ERRORS: readonly SpecError[] = [
  { code: "API_ERROR", description: "API error; retry, inserting the card if possible", status: "error", card: "4000000000000101", usd: "99.01" },
  { code: "APP_ERROR", description: "Application error; retry, inserting the card if possible", status: "error", card: "4000000000000119", usd: "99.02" },
  { code: "EMV_ERROR", description: "Problem processing the transaction; retry, inserting the card if possible", status: "error", card: "4000000000000127", usd: "99.03" },
  { code: "OFFLINE_DECLINED", description: "Declined", status: "error", card: "4000000000000135", usd: "99.04" },
  { code: "ONLINE_DECLINED", description: "The processor declined the card", status: "error", card: "4000000000000143", usd: "99.05" },
  { code: "POS_CANCEL", description: "Canceled by clerk", status: "requires_payment_method", card: "4000000000000150", usd: "99.06" },
  { code: "REVERSAL", description: "Payment declined", status: "error", card: "4000000000000168", usd: "99.07" },
  { code: "USER_CANCEL", description: "Canceled by shopper", status: "requires_payment_method", card: "4000000000000176", usd: "99.08" },
  { code: "USER_TIMEOUT", description: "Timed out waiting for shopper", status: "requires_payment_method", card: "4000000000000184", usd: "99.09" },
  { code: "WEB_TIMEOUT", description: "Connection issue; check the network and retry", status: "requires_payment_method", card: "4000000000000192", usd: "99.10" },
];

/** The same amount in JPY (no minor units): the test amounts count minor units in any currency. */
export const jpyOf = (usd: string) => usd.replace(".", "");
