// The circuit breaker of one endpoint: its attempts' results in a row, over all its payments'
// streams. An endpoint starts with one post in flight, doubling with each acknowledged one up to
// its concurrency (a slow start: a receiver that never answers holds one socket). After a failure
// it gets one post at a time until one is acknowledged; after BREAKER_THRESHOLD failures in a row
// it is open: nothing is posted until its own backoff has passed, then one post (a probe) tells
// whether it recovered. A receiver that keeps timing out then costs one socket and one row write
// per probe, not one per pending delivery. Kept in the endpoint's delivery state
// (./delivery-types.ts), so a restart or another process resumes it.
import { backoffDelay, type Backoff } from "./backoff.js";

export interface Breaker {
  /** Failed attempts in a row since the last acknowledged one. */
  failures: number;
  /** When the first of them was made (null: the last attempt was acknowledged). */
  since: number | null;
  /** While open: no post before this. */
  probe_at: number;
  /** Acknowledged in a row (counted up to 16): the posts in flight allowed double with each. */
  ok?: number;
}

/** Failures in a row that open the breaker. */
export const BREAKER_THRESHOLD = 5;
export const closedBreaker = (): Breaker => ({ failures: 0, since: null, probe_at: 0 });
export const isOpen = (breaker: Breaker) => breaker.failures >= BREAKER_THRESHOLD;

/** Posts the endpoint may have in flight now (its concurrency while healthy, one while failing, none while open and waiting). */
export function allowance(breaker: Breaker, now: number, concurrency: number): number {
  if (breaker.failures === 0) return Math.min(concurrency, 2 ** (breaker.ok ?? 0));
  return isOpen(breaker) && breaker.probe_at > now ? 0 : 1;
}

/** Records an attempt's result; says when the breaker opened or closed with it. */
export function recordAttempt(breaker: Breaker, delivered: boolean, started: number, now: number, backoff: Backoff, random: () => number): "opened" | "closed" | null {
  if (delivered) {
    const wasOpen = isOpen(breaker);
    Object.assign(breaker, closedBreaker(), { ok: Math.min(16, (breaker.ok ?? 0) + 1) });
    return wasOpen ? "closed" : null;
  }
  breaker.failures++;
  breaker.ok = 0;
  breaker.since ??= started;
  if (!isOpen(breaker)) return null;
  breaker.probe_at = now + backoffDelay(breaker.failures - BREAKER_THRESHOLD + 1, backoff, random);
  return breaker.failures === BREAKER_THRESHOLD ? "opened" : null;
}
