// The refusals of a request whose Idempotency-Key another request holds (409, with when to retry)
// or used (422): src/idempotency.ts answers them.
import { CardflowError } from "./errors.js";

/**
 * 409: a request with this key is still running (in this or another process), or its process died
 * and its claim holds the key until `claimEnds` (the lease's end).
 */
export class IdempotencyKeyInUse extends CardflowError {
  override readonly name = "IdempotencyKeyInUse";
  readonly status = 409;
  readonly code = "idempotency_key_in_use";
  override readonly param = "Idempotency-Key";
  constructor(
    /** Seconds after which a retry is worth it (the HTTP Retry-After): claimRetryAfter. */
    readonly retryAfterSeconds = 1,
    /** When the claim ends at the latest (ISO 8601), when known. */
    claimEnds?: string,
  ) {
    super(
      `a request with this Idempotency-Key is still being processed; retry later${claimEnds ? `; its claim ends by ${claimEnds} at the latest, if the request that holds it has stopped` : ""}`,
    );
  }
}

/** Up to this age a claim is a request that normally answers soon: retried every second. */
const YOUNG_CLAIM_MS = 5_000;

/**
 * Retry-After of a claim held by another process (or a dead one), claimed `ageMs` ago and holding
 * the key `leftMs` more at most. Young: 1 s. Older, half its age: a request that has run a while
 * (a blocking auth, a slow processor) is as likely to be dead as to run on, so the retries come at
 * ages a, 1.5a, 2.25a…: a handful over the whole lease instead of one a second, and a live request's
 * answer is seen at most half its run late. Never past the lease's end (+1 s, strictly after it),
 * when a dead request's key is freed and its retry gets the answer.
 */
export function claimRetryAfter(ageMs: number, leftMs: number): number {
  if (ageMs < YOUNG_CLAIM_MS) return 1;
  return Math.max(1, Math.min(Math.floor(leftMs / 1000) + 1, Math.ceil(ageMs / 2000)));
}

/** 422: the key was used with another request. */
export class IdempotencyKeyReused extends CardflowError {
  override readonly name = "IdempotencyKeyReused";
  readonly status = 422;
  readonly code = "idempotency_key_reused";
  override readonly param = "Idempotency-Key";
  constructor() {
    super("this Idempotency-Key was used with another request; use a new key");
  }
}
