// Retry timing of webhook deliveries: exponential backoff with "equal jitter", up to a horizon
// after which the endpoint is marked failing.

export interface Backoff {
  /** Delay before the first retry; doubles on each failure. Default 5 s. */
  baseMs: number;
  /** Longest delay between two attempts. Default 1 h. */
  maxMs: number;
  /** How long an event is retried from its first failure before the endpoint is marked failing. Default 3 days. */
  horizonMs: number;
}
export const DEFAULT_BACKOFF: Backoff = { baseMs: 5_000, maxMs: 3_600_000, horizonMs: 3 * 86_400_000 };

/** The delay before attempt n+1 after n failures: exponential, capped, with "equal jitter" (half fixed, half random). */
export function backoffDelay(failures: number, { baseMs, maxMs }: Backoff, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(failures - 1, 40));
  return ceiling / 2 + random() * (ceiling / 2);
}
