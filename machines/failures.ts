// Spec §7: the terminal error codes, their descriptions, and — in this one table — the status a
// failed authorization with that code leads to (spec §3/§7: timeouts and cancellations go back
// to requires_payment_method; declines and processing failures go to error). Both allow a retry.

export const LAST_ERROR_CODES = [
  "API_ERROR",
  "APP_ERROR",
  "EMV_ERROR",
  "OFFLINE_DECLINED",
  "ONLINE_DECLINED",
  "POS_CANCEL",
  "REVERSAL",
  "USER_CANCEL",
  "USER_TIMEOUT",
  "WEB_TIMEOUT",
] as const;
export type LastErrorCode = (typeof LAST_ERROR_CODES)[number];

export type FailureStatus = "requires_payment_method" | "error";

export const FAILURES: Record<LastErrorCode, { description: string; leadsTo: FailureStatus }> = {
  API_ERROR: { description: "API error; retry, inserting the card if possible", leadsTo: "error" },
  APP_ERROR: { description: "Application error; retry, inserting the card if possible", leadsTo: "error" },
  EMV_ERROR: { description: "Problem processing the transaction; retry, inserting the card if possible", leadsTo: "error" },
  OFFLINE_DECLINED: { description: "Declined", leadsTo: "error" },
  ONLINE_DECLINED: { description: "The processor declined the card", leadsTo: "error" },
  POS_CANCEL: { description: "Canceled by clerk", leadsTo: "requires_payment_method" },
  REVERSAL: { description: "Payment declined", leadsTo: "error" },
  USER_CANCEL: { description: "Canceled by shopper", leadsTo: "requires_payment_method" },
  USER_TIMEOUT: { description: "Timed out waiting for shopper", leadsTo: "requires_payment_method" },
  WEB_TIMEOUT: { description: "Connection issue; check the network and retry", leadsTo: "requires_payment_method" },
};

/** A failure without a code is a plain decline (spec §3: "decline → error; last_error set"). */
export function failureLeadsTo(code: LastErrorCode | null): FailureStatus {
  return code ? FAILURES[code].leadsTo : "error";
}
