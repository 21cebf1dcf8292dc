// Idempotency-Key on every POST (an extension): a retry with the same key and body gets the first
// answer without a second effect; the same key with another body is refused (422); the same key
// while the first request runs is refused (409). The record is stored with the command's events,
// in the same transaction (CommandContext.idempotency), then replaced by the final answer.
// Only successful answers are kept: a refused request had no effect and may simply be retried.
import { createHash } from "node:crypto";
import { canonicalJson } from "../audit/chain.js";
import { isoTimestamp, type Clock } from "../clock.js";
import type { EventStore, IdempotencyRecord } from "../store/port.js";
import { HttpProblem } from "./problem.js";

export const IDEMPOTENCY_HEADER = "idempotency-key";
const KEY = /^[\x21-\x7e]{1,255}$/;

export interface Answer {
  status: number;
  body: unknown;
  replayed: boolean;
}

/** Keys sorted at every level (canonical JSON): the same JSON body always has the same fingerprint. */
export function fingerprintOf(method: string, path: string, body: unknown): string {
  return createHash("sha256").update(`${method} ${path}\n${canonicalJson(body ?? null)}`).digest("hex");
}

export function createIdempotency({ store, clock, ttlMs }: { store: EventStore; clock: Clock; ttlMs: number }) {
  const inFlight = new Set<string>();

  return {
    /**
     * Runs `execute` once per (scope, key). `execute` receives the function that turns an answer
     * body into the record to store with its append.
     */
    async run(
      scope: string,
      key: string,
      fingerprint: string,
      execute: (recordOf: (body: unknown) => IdempotencyRecord) => Promise<unknown>,
    ): Promise<Answer> {
      if (!KEY.test(key)) throw new HttpProblem(400, "idempotency_key_invalid", "Idempotency-Key: 1 to 255 visible ASCII characters", "Idempotency-Key");
      const scoped = `${scope}:${key}`;
      // checked and taken before the first await: two concurrent requests cannot both pass
      if (inFlight.has(scoped)) {
        throw new HttpProblem(409, "idempotency_key_in_use", "a request with this Idempotency-Key is still being processed; retry later", "Idempotency-Key");
      }
      inFlight.add(scoped);
      try {
        const now = isoTimestamp(clock.now());
        const previous = await store.readIdempotency(scoped);
        if (previous && previous.expires_at > now) {
          if (previous.fingerprint !== fingerprint) {
            throw new HttpProblem(422, "idempotency_key_reused", "this Idempotency-Key was used with another request; use a new key", "Idempotency-Key");
          }
          return { status: previous.status, body: previous.body, replayed: true };
        }
        const expires_at = isoTimestamp(clock.now() + ttlMs);
        const recordOf = (body: unknown): IdempotencyRecord => ({ key: scoped, fingerprint, status: 200, body, expires_at });
        const body = await execute(recordOf);
        await store.saveIdempotency(recordOf(body));
        return { status: 200, body, replayed: false };
      } finally {
        inFlight.delete(scoped);
      }
    },

    /** Drops records past their time (run periodically by the server). */
    purge: () => store.purgeIdempotency(isoTimestamp(clock.now())),
  };
}

export type Idempotency = ReturnType<typeof createIdempotency>;
