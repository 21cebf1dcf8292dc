// The per-account cap of Idempotency-Key records (IDEMPOTENCY_MAX_KEYS_PER_ACCOUNT): a new key past
// it is refused (429) with Retry-After when the account's first kept key expires. Counted in the
// store every `recountMs`, each process adding the keys it took since (src/idempotency.ts takes one
// per new key, and gives it back when its request is released with no effect).
import { isoTimestamp, type Clock } from "./clock.js";
import { setBounded } from "./bounded.js";
import { CardflowError } from "./errors.js";
import type { EventStore } from "./store/port.js";

/** Retry-After of a full account whose records all wait on requests in flight (they free as those are answered). */
const RETRY_WHEN_UNKNOWN_S = 60;

/** 429: the scope (an account) holds as many kept keys as it may; they free up as they expire. */
export class IdempotencyKeysExhausted extends CardflowError {
  override readonly name = "IdempotencyKeysExhausted";
  readonly status = 429;
  readonly code = "idempotency_keys_exhausted";
  override readonly param = "Idempotency-Key";
  /**
   * When the account's first record gives its key up (RETRY_WHEN_UNKNOWN_S when none will by time,
   * or the store cannot tell). "At least" the cap: processes sharing a store may together pass it
   * by the keys the others took since their last count (`recountSeconds`).
   */
  constructor(
    limit: number,
    readonly retryAfterSeconds: number,
    recountSeconds: number,
  ) {
    super(
      `this account holds at least ${limit} Idempotency-Key records, the most kept at once (processes sharing the store may together pass it by the keys taken in ${recountSeconds} s); retry in ${retryAfterSeconds} s, when the first expires, or send the request without a key`,
    );
  }
}

/**
 * Per scope: records counted in the store at `at`, plus the keys this process claimed since; and,
 * once refused, when its first record frees (ms; null: unknown), so refusals read the store once a recount.
 */
export type Counted = { count: number; at: number; frees?: number | null };

export function keyCap({ store, clock, maxKeysPerScope, recountMs }: { store: EventStore; clock: Clock; maxKeysPerScope: number; recountMs: number }) {
  const at = () => isoTimestamp(clock.now());
  const counts = new Map<string, Counted>();
  /** A recount under way, per scope: the requests that need it meanwhile share it (and then count on from it one by one). */
  const recounts = new Map<string, Promise<Counted>>();

  function counted(scope: string): Counted | Promise<Counted> {
    const known = counts.get(scope);
    if (known && clock.now() - known.at < recountMs) return known;
    let recount = recounts.get(scope);
    if (!recount) {
      recount = store.countIdempotency!(scope, at())
        .then((count) => {
          const fresh = { count, at: clock.now() };
          setBounded(counts, scope, fresh, 10_000);
          return fresh;
        })
        .finally(() => recounts.delete(scope));
      recounts.set(scope, recount);
    }
    return recount;
  }

  /**
   * Refuses the key just claimed when its scope is past the cap. The store counts the records that
   * keep a key (answered, or in flight with an effect): not the claims of requests still deciding,
   * which may yet be refused and released (counted, concurrent first uses of an account refused
   * each other). Each process adds the keys it took since its last count.
   */
  async function take(scope: string): Promise<Counted | undefined> {
    if (!store.countIdempotency) return undefined;
    const scoped = await counted(scope);
    scoped.count++;
    if (scoped.count > maxKeysPerScope) {
      scoped.count--; // released by the caller
      if (scoped.frees === undefined) {
        const next = (await store.nextIdempotencyRelease?.(scope, at())) ?? null;
        scoped.frees = next === null ? null : Date.parse(next);
      }
      const retryAfter = scoped.frees === null ? RETRY_WHEN_UNKNOWN_S : Math.max(1, Math.ceil((scoped.frees - clock.now()) / 1000));
      throw new IdempotencyKeysExhausted(maxKeysPerScope, retryAfter, Math.ceil(recountMs / 1000));
    }
    return scoped;
  }

  /** A key taken (`take`) whose request was released with no effect: not remembered, so not counted. */
  function giveBack(scoped: Counted | undefined): void {
    if (scoped) scoped.count--;
  }

  return { take, giveBack };
}
