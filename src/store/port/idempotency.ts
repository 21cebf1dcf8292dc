// Idempotency-Key records: claimed before a request runs, answered with its events.

/**
 * One request made with an Idempotency-Key, as the store keeps it: first its claim (in_flight),
 * then its answer (done). The key is unique in the store: a second request cannot claim it.
 */
export interface IdempotencyRecord {
  /** Scoped key, e.g. `${account}:${Idempotency-Key}`. */
  key: string;
  /** Hash of the request (method, path and body): the same key with another request is refused. */
  fingerprint: string;
  /** Unique per claiming request: only that request may replace or release its claim. */
  token: string;
  /**
   * in_flight: the request runs (or its process died); `expires_at` ends its lease.
   * done: the final answer, kept until `expires_at`.
   */
  state: "in_flight" | "done";
  /** The answer. While in flight: the one recorded with the events appended so far (status 0, body null before any). */
  status: number;
  body: unknown;
  /** ISO 8601 (UTC, compared as text). */
  expires_at: string;
}

/**
 * Whether a record still holds its key at `now`: a done answer until it expires; a claim until its
 * lease ends, and after that only when an answer was recorded with its events (the request acted:
 * a retry must replay that answer, never act again).
 */
export const holdsKey = (r: Pick<IdempotencyRecord, "state" | "status" | "expires_at">, now: string) =>
  r.expires_at >= now || (r.state === "in_flight" && r.status !== 0);

/**
 * A record that keeps its key whatever its request still does: answered and not expired, or in
 * flight with an effect (what the cap counts; a claim still deciding may yet be released).
 */
export const keepsKey = (r: Pick<IdempotencyRecord, "state" | "status" | "expires_at">, now: string) =>
  r.state === "done" ? r.expires_at >= now : r.status !== 0;

/** The request's claim on its Idempotency-Key was taken over by another (its lease ran out). */
export class IdempotencyClaimLost extends Error {
  override readonly name = "IdempotencyClaimLost";
  constructor(readonly key: string) {
    super(`Idempotency-Key ${key}: the claim is no longer this request's`);
  }
}

export interface IdempotencyStore {
  /**
   * Claims an Idempotency-Key: stores `claim` (in_flight, status 0) unless a record holds the key
   * (holdsKey); returns undefined when claimed, else the record holding it. One atomic statement
   * against the key's unique constraint, so of concurrent claimants (in any process) one wins.
   */
  claimIdempotency(claim: IdempotencyRecord, now: string): Promise<IdempotencyRecord | undefined>;
  /** Replaces the record of the same key and token (a request without events, the final answer); false when the key is no longer this token's. */
  saveIdempotency(record: IdempotencyRecord): Promise<boolean>;
  /**
   * Ends the claim of a request that failed: deleted when no answer was recorded (it had no effect,
   * a retry may run), otherwise done with the recorded answer until `expires_at`.
   */
  releaseIdempotency(key: string, token: string, expires_at: string): Promise<void>;
  readIdempotency(key: string): Promise<IdempotencyRecord | undefined>;
  /** Deletes records that no longer hold their key at `now` (ISO 8601); returns how many. */
  purgeIdempotency(now: string): Promise<number>;
  /**
   * How many records of one scope (keys `${scope}:…`) keep their key at `now` (keptKey): the
   * per-account cap (src/idempotency.ts). Optional: a store that cannot answer it cheaply has no cap.
   */
  countIdempotency?(scope: string, now: string): Promise<number>;
  /**
   * When the scope's first answered record gives its key up (ISO 8601; null when none holds one at
   * `now`): the cap's Retry-After. A claim in flight is not counted: answered, it is kept its full time.
   */
  nextIdempotencyRelease?(scope: string, now: string): Promise<string | null>;
}
