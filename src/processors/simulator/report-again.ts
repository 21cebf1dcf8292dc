// A processor re-sends a notification nobody acknowledged. The simulator's reports (a terminal's
// collection, a capture settling) go to cardflow's store; one the store could not take
// (StoreUnavailable: an outage, a lock) is sent again every REPORT_AGAIN_MS, so the payment shows
// what the processor did once the store answers again. Any other failure is cardflow's refusal:
// sending it again would change nothing.
import type { Clock } from "../../clock.js";
import { StoreUnavailable } from "../../store/port.js";

export const REPORT_AGAIN_MS = 1_000;

/**
 * Runs `send`, and again every REPORT_AGAIN_MS while it fails with StoreUnavailable, at most
 * `times` more times. The first try's outcome is the caller's (a helper's 503); later ones are the
 * simulator's own.
 */
export function reportAgainWhileUnavailable(clock: Clock, send: () => Promise<void>, times = Infinity): Promise<void> {
  const attempt = (left: number): Promise<void> =>
    send().catch((error: unknown) => {
      if (error instanceof StoreUnavailable && left > 0) clock.setTimer(REPORT_AGAIN_MS, () => void attempt(left - 1).catch(() => undefined));
      throw error;
    });
  return attempt(times);
}
