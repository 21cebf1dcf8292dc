import { CardflowError } from "../../errors.js";

/**
 * The store cannot be reached right now (a lost connection, the database restarting, another
 * process holding SQLite's write lock past the bound). Nothing was acknowledged; retry later (the
 * HTTP API answers 503 with Retry-After: src/http/status.ts).
 */
export class StoreUnavailable extends CardflowError {
  override readonly name = "StoreUnavailable";
  readonly code = "store_unavailable";
  constructor(reason: string, options?: ErrorOptions) {
    super(`the service's database is unavailable (${reason}); retry later`, options);
  }
}

/**
 * A store that could not be opened, said naming it: the file at fault (SQLite), or where its URL
 * was given and that URL, password masked (PostgreSQL). `store` describes it as commands say which
 * store they use; `unavailable` when it could not be reached (a start waits for it).
 */
export class StoreOpenFailed extends Error {
  override readonly name = "StoreOpenFailed";
  constructor(readonly store: string, message: string, readonly unavailable: boolean, options: ErrorOptions) {
    super(message, options);
  }
}

/**
 * Runs `attempt` until it succeeds, pausing after each failure (firstMs, doubling up to maxMs):
 * a background loop (a feed's or the read models' first catch-up) waits an outage out instead of
 * failing the process. Resolves undefined, without trying again, once `signal` aborts (a stop).
 */
export async function untilAvailable<T>(
  attempt: () => Promise<T>,
  { signal, onError, firstMs = 100, maxMs = 5_000 }: { signal: AbortSignal; onError?: (error: unknown) => void; firstMs?: number; maxMs?: number },
): Promise<T | undefined> {
  for (let failures = 0; !signal.aborted; failures++) {
    try {
      return await attempt();
    } catch (error) {
      if (signal.aborted) return undefined;
      onError?.(error);
      await new Promise<void>((resolve) => {
        const done = () => (clearTimeout(timer), signal.removeEventListener("abort", done), resolve());
        const timer = setTimeout(done, Math.min(firstMs * 2 ** failures, maxMs));
        signal.addEventListener("abort", done, { once: true });
      });
    }
  }
  return undefined;
}

/**
 * The start of a background loop (the read models' runner, the webhook feed, webhook delivery):
 * its first attempt waits a store outage out (untilAvailable), and stop() ends a start still
 * waiting (it resolves undefined); the next start waits afresh.
 */
export function outageTolerantStart(onError?: (error: unknown) => void) {
  let stopping = new AbortController();
  return {
    /** `attempt` until it succeeds; undefined once stop() was called (before it succeeded or meanwhile). */
    async attempt<T>(attempt: () => Promise<T>): Promise<T | undefined> {
      const { signal } = stopping;
      const result = await untilAvailable(attempt, { signal, ...(onError && { onError }) });
      return signal.aborted ? undefined : result;
    },
    stop(): void {
      stopping.abort();
      stopping = new AbortController();
    },
  };
}
