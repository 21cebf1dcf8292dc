// waitForPayment: polls the status read (spec §4.5) until the payment has a status of `until`,
// as spec §8 advises after an asynchronous terminal auth: every 0.5–1 s, for 3 minutes by
// default (a shorter or longer wait when asked), then WaitTimeout.
import { statusesTagged, type PaymentStatus } from "../../machines/statuses.js";
import type { PaymentRecord } from "../present/payment-record.js";
import { WaitTimeout } from "./errors.js";
import { sleep, type CallOptions } from "./transport.js";

export interface WaitQuery {
  external_account_id: string;
  payment_id: string;
  /** Resolve once the payment has one of these statuses (default: a status spec §3 stops polling at). */
  until?: readonly PaymentStatus[];
  /** Between reads: 500–1000 ms (spec §8: about 1 s, 0.5 s for a responsive interface); default 1000. */
  intervalMs?: number;
  /** Give up after this long (ms); default 180000 (spec §8: poll at least 3 minutes). */
  timeoutMs?: number;
}

/**
 * Statuses in which a payment waits for a shopper, a terminal or a processor (the machine's tag),
 * but `capture_requested`: spec §3 stops polling there (the processor settles the capture later,
 * and the record says so; a caller waiting for `succeeded` passes `until`).
 */
const WAITING: readonly PaymentStatus[] = statusesTagged("awaiting_processor").filter((status) => status !== "capture_requested");

type Read = (query: { external_account_id: string; payment_id: string }, call: Pick<CallOptions, "signal">) => Promise<PaymentRecord>;

export async function waitForPayment(read: Read, { external_account_id, payment_id, until, intervalMs = 1000, timeoutMs = 180_000 }: WaitQuery, { signal }: Pick<CallOptions, "signal"> = {}): Promise<PaymentRecord> {
  if (!(intervalMs >= 500 && intervalMs <= 1000)) throw new RangeError(`intervalMs: ${intervalMs} is outside 500–1000 (spec §8)`);
  if (!(timeoutMs > 0 && Number.isFinite(timeoutMs))) throw new RangeError(`timeoutMs: ${timeoutMs} is not a positive number of milliseconds`);
  const done = (status: PaymentStatus) => (until ? until.includes(status) : !WAITING.includes(status));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const payment = await read({ external_account_id, payment_id }, signal ? { signal } : {});
    if (done(payment.status)) return payment;
    const left = deadline - Date.now();
    if (left <= 0) throw new WaitTimeout(payment_id, payment.status, timeoutMs);
    await sleep(Math.min(intervalMs, left), signal);
  }
}
