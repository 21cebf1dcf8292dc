// Idempotency keys: a retry with the same key and request gets the first answer without a second
// effect, in one process or many sharing a store. The HTTP API runs every POST with an
// Idempotency-Key through this module; a library caller runs an engine command the same way:
//
//   const idempotency = createIdempotency({ store: engine.store, clock: engine.clock });
//   const { body } = await idempotency.run(
//     { scope: "acct_1", key: "order-42", fingerprint: fingerprintOf("createIntent", input) },
//     (ctx) => engine.createIntent(input, ctx),
//   );
//
// The key is claimed in the store before the command runs (a unique key refuses a second
// claimant: in flight -> IdempotencyKeyInUse; done with the same request -> replay; another
// request -> IdempotencyKeyReused). Each append of the command replaces the claim with what it
// would answer, in the append's transaction and only while the claim is still this request's; the
// final answer replaces it at the end. A claim whose process died expires after a lease longer
// than the longest request (the 120 s blocking auth), then a retry runs, or, if the dead request
// had appended, replays the answer recorded with its events. Only successful answers are kept: a
// refused request had no effect and may simply be retried.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { canonicalJson } from "./events/canonical-json.js";
import { isoTimestamp, type Clock } from "./clock.js";
import { InvalidRequest } from "./errors.js";
import { keyCap, type Counted } from "./idempotency-cap.js";
import { claimRetryAfter, IdempotencyKeyInUse, IdempotencyKeyReused } from "./idempotency-refusals.js";
import { answerSeal } from "./idempotency-seal.js";
import { holdsKey, IdempotencyClaimLost, StoreUnavailable, type EventStore, type IdempotencyRecord } from "./store/port.js";

export { IdempotencyKeysExhausted } from "./idempotency-cap.js";
export { claimRetryAfter, IdempotencyKeyInUse, IdempotencyKeyReused } from "./idempotency-refusals.js";

const HOUR = 3_600_000;
const KEY = /^[\x21-\x7e]{1,255}$/;

/** What a command receives to record its answer with its events (spread into its CommandContext). */
export interface IdempotentContext {
  idempotency_key: string;
  /** When the keeping time of keys ends for a key first used now minus it (ISO 8601): a try under this key before it was another request. */
  idempotency_since: string;
  idempotency: (answer: any) => IdempotencyRecord;
  /** The command answered from what an earlier try with this key did: the answer is a replay. */
  answeredFromStore: () => void;
}

export interface IdempotentRequest {
  /** Whose keys these are (an account): the same key in two scopes is two keys. */
  scope: string;
  /** 1 to 255 visible ASCII characters. */
  key: string;
  /** fingerprintOf(the request): the same key with another fingerprint is refused. */
  fingerprint: string;
  /** The fingerprint an earlier version gave it: a record written before an upgrade still replays. */
  formerFingerprint?: string;
}

export interface Answer {
  status: number;
  body: unknown;
  /** true when this is the stored answer of an earlier request with the key. */
  replayed: boolean;
}

export interface IdempotencyOptions {
  store: EventStore;
  clock: Clock;
  /**
   * 32 bytes: the stored answers are sealed with it (AES-256-GCM), so the secrets some answers
   * carry (a webhook endpoint's secret, an intent's client secret) are not kept in plaintext. The
   * server derives it from the signing key, the same in every process. Absent: a random key of
   * this process (records then replay only in it).
   */
  sealKey?: Buffer;
  /** How long an answer is kept (default 24 h). */
  ttlMs?: number;
  /** How long a claim holds its key without an answer: longer than the longest request (default 180 s). */
  leaseMs?: number;
  /**
   * The most records one scope (account) may hold at once; a new key past it is refused (429)
   * instead of the table growing without bound. Default 1,000,000. Counted by the store
   * (countIdempotency), at most every recountMs per scope, and by this process in between.
   */
  maxKeysPerScope?: number;
  /** How often a scope's records are counted again in the store (ms). Default 10 s. */
  recountMs?: number;
}

/** Keys sorted at every level (canonical JSON): the same request always has the same fingerprint. */
export function fingerprintOf(what: string, body: unknown): string {
  return createHash("sha256").update(`${what}\n${canonicalJson(body ?? null)}`).digest("hex");
}

/** How often a claim's end (its release, or its answer kept) is written again while the store is unreachable. */
const SETTLE_RETRY_MS = 1_000;
/** How many times (a second apart) a claim of unknown outcome is looked for once released, in case it landed later. */
const LATE_CLAIM_LOOKS = 15;

export function createIdempotency({ store, clock, ttlMs = 24 * HOUR, leaseMs = 180_000, sealKey = randomBytes(32), maxKeysPerScope = 1_000_000, recountMs = 10_000 }: IdempotencyOptions) {
  const at = (offsetMs = 0) => isoTimestamp(clock.now() + offsetMs);
  // said at once: a key of another length would fail only when an answer is sealed, after the command acted
  if (!Buffer.isBuffer(sealKey) || sealKey.length !== 32) throw new TypeError(`createIdempotency: option sealKey must be a Buffer of 32 bytes (AES-256), not ${Buffer.isBuffer(sealKey) ? `${sealKey.length} bytes` : typeof sealKey}`);
  const { seal, open } = answerSeal(sealKey);
  const cap = keyCap({ store, clock, maxKeysPerScope, recountMs });
  /**
   * The claims this process holds (record key -> token), told apart from a dead process's: of the
   * requests running here, and of failed ones whose release waits on the store (freed once it answers).
   */
  const running = new Map<string, string>();
  const forget = ({ key, token }: IdempotencyRecord) => void (running.get(key) === token && running.delete(key));

  /**
   * Ends a claim in the store: `write` releases a failed request's key or keeps an answered one's
   * answer. The store may be what failed (a 503 store_unavailable, whose retry with the same key is
   * the advice; or an outage right after the command acted): then it is written again every second
   * in the background until the store answers, so the retry is not held 409 for the whole lease;
   * the lease ends it at the latest. Meanwhile the claim stays this process's (its 409s say 1 s).
   * The record's token guards it: a claim taken over meanwhile is left alone.
   */
  async function settle(claimed: IdempotencyRecord, write: () => Promise<unknown>, written: () => void = () => forget(claimed)): Promise<void> {
    const until = clock.now() + leaseMs;
    const attempt = async (): Promise<void> => {
      try {
        await write();
      } catch {
        // real time, not the clock's, and unref'd: a process that stops does not wait for it
        if (clock.now() + SETTLE_RETRY_MS < until) return void setTimeout(() => void attempt(), SETTLE_RETRY_MS).unref();
      }
      written();
    };
    await attempt();
  }
  const releaseNow = (claimed: IdempotencyRecord) => store.releaseIdempotency(claimed.key, claimed.token, at(ttlMs));
  const release = (claimed: IdempotencyRecord) => settle(claimed, () => releaseNow(claimed));

  /**
   * Releases a claim whose statement failed with its outcome unknown: a frozen database runs it when
   * it resumes, perhaps just after the release (which then found nothing). So once the release is
   * written, the key is looked at every second for a while and released again if the claim landed;
   * it stays this process's claim until then (its retries: 409, Retry-After 1).
   */
  function releaseUnanswered(claimed: IdempotencyRecord): void {
    running.set(claimed.key, claimed.token);
    const look = async (left: number): Promise<void> => {
      const held = await store.readIdempotency(claimed.key).catch(() => undefined);
      if (held?.token === claimed.token && held.state === "in_flight") await releaseNow(claimed).catch(() => undefined);
      if (left > 1) setTimeout(() => void look(left - 1), SETTLE_RETRY_MS).unref();
      else forget(claimed);
    };
    void settle(claimed, () => releaseNow(claimed), () => void setTimeout(() => void look(LATE_CLAIM_LOOKS), SETTLE_RETRY_MS).unref());
  }

  /** Takes the key, or answers from the record holding it. */
  async function claim(claimed: IdempotencyRecord, formerFingerprint?: string): Promise<Answer | undefined> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = at();
      const held = await store.claimIdempotency(claimed, now).catch((error: unknown) => {
        // its outcome unknown: released by its token once the store answers, not held 409 for the lease
        if (error instanceof StoreUnavailable) releaseUnanswered(claimed);
        throw error;
      });
      if (!held) return undefined;
      const answer = await answerOf(held, claimed.fingerprint, formerFingerprint, now);
      if (answer) return answer;
    }
    throw new IdempotencyKeyInUse();
  }

  /** What the record holding the key answers; undefined when it changed meanwhile (look again). */
  async function answerOf(held: IdempotencyRecord, fingerprint: string, formerFingerprint: string | undefined, now: string): Promise<Answer | undefined> {
    if (held.fingerprint !== fingerprint && held.fingerprint !== formerFingerprint) throw new IdempotencyKeyReused();
    if (held.state === "done") return { status: held.status, body: open(held.body), replayed: true };
    if (held.expires_at >= now) throw inUse(held);
    // Its lease ran out after it appended: it acted, so its recorded answer becomes the final one.
    if (await store.saveIdempotency({ ...held, state: "done", expires_at: at(ttlMs) })) return { status: held.status, body: open(held.body), replayed: true };
    return undefined;
  }

  /**
   * A client secret's keys were recorded under their scope unescaped before 0.2.0
   * (`client:<hash>:<key>`): a record kept there still answers, not a second run (an account's
   * scope is never read unescaped: `a:b` + `c` and `a` + `b:c` were one record).
   */
  async function formerRecord(scope: string, key: string, fingerprint: string, formerFingerprint: string | undefined): Promise<Answer | undefined> {
    if (!scope.startsWith(CLIENT_SCOPE)) return undefined;
    const now = at();
    const held = await store.readIdempotency(`${scope}:${key}`);
    return held && holdsKey(held, now) ? answerOf(held, fingerprint, formerFingerprint, now) : undefined;
  }

  /**
   * The 409 of a key held by `held`. Claimed `leaseMs` before its expiry (a process with another
   * lease, SYNC_AUTH_TIMEOUT_MS, is seen a little younger or older: still never past its end). A
   * claim of a request running in this process is alive: retried every second.
   */
  function inUse(held: IdempotencyRecord): IdempotencyKeyInUse {
    if (running.get(held.key) === held.token) return new IdempotencyKeyInUse(1, held.expires_at);
    const ends = Date.parse(held.expires_at);
    return new IdempotencyKeyInUse(claimRetryAfter(clock.now() - (ends - leaseMs), ends - clock.now()), held.expires_at);
  }

  return {
    /**
     * Runs `execute` at most once per (scope, key) while its answer is kept. `present` turns the
     * command's answer into the body stored and returned (default: the answer itself).
     */
    async run(
      { scope, key, fingerprint, formerFingerprint }: IdempotentRequest,
      execute: (ctx: IdempotentContext) => Promise<unknown>,
      present: (answer: any) => unknown = (answer) => answer,
    ): Promise<Answer> {
      if (!KEY.test(key)) throw new InvalidRequest("Idempotency-Key: 1 to 255 visible ASCII characters", "Idempotency-Key", "idempotency_key_invalid");
      const claimed: IdempotencyRecord = { key: recordKey(scope, key), fingerprint, token: randomUUID(), state: "in_flight", status: 0, body: null, expires_at: at(leaseMs) };
      const replay = (await formerRecord(scope, key, fingerprint, formerFingerprint)) ?? (await claim(claimed, formerFingerprint));
      if (replay) return replay;
      running.set(claimed.key, claimed.token);
      // a new key (a retry of a kept one replayed above, whatever the count): held to the scope's cap
      let scoped: Counted | undefined;
      try {
        scoped = await cap.take(scopePart(scope));
      } catch (error) {
        await store.releaseIdempotency(claimed.key, claimed.token, at()).catch(() => undefined);
        forget(claimed);
        throw error;
      }
      let body: unknown;
      let replayed = false;
      /** An answer went to an append with the record: the release may then keep the key (it acted). */
      let answered = false;
      const record = (answer: unknown): IdempotencyRecord => ((answered = true), { ...claimed, status: 200, body: seal(present(answer)) });
      try {
        body = present(await execute({ idempotency_key: key, idempotency_since: at(-ttlMs), idempotency: record, answeredFromStore: () => void (replayed = true) }));
      } catch (error) {
        // the store away: the 503 does not wait for the release (written once the store answers)
        const released = release(claimed);
        if (!(error instanceof StoreUnavailable)) await released;
        // released with no effect, it is not remembered: nor counted against the cap
        if (!answered) cap.giveBack(scoped);
        throw error instanceof IdempotencyClaimLost ? new IdempotencyKeyInUse() : error;
      }
      // Not saved (the lease ran out and a retry took the key over): the effect stands all the same,
      // and the answer recorded with its events is kept. The store away: saved once it answers.
      const sealed = seal(body);
      await settle(claimed, () => store.saveIdempotency({ ...claimed, state: "done", status: 200, body: sealed, expires_at: at(ttlMs) }));
      return { status: 200, body, replayed };
    },

    /** Drops records past their time (run periodically by the server). */
    purge: () => store.purgeIdempotency(at()),
  };
}

export type Idempotency = ReturnType<typeof createIdempotency>;

/**
 * A scope as its records' keys begin: ":" (and "%", the escape) escaped, so the scope ends at the
 * first ":" and account "a" with key "b:c" is not account "a:b" with key "c" (nor is either's range
 * of keys, counted against the cap, the other's). An account id without them is written as is, so
 * the records kept before this rule are the same keys.
 */
/** The scope of the keys of a request made with a payment's client secret (its hash follows). */
export const CLIENT_SCOPE = "client:";

const scopePart = (scope: string) => scope.replace(/%/g, "%25").replace(/:/g, "%3A");

/** The store's key of a (scope, Idempotency-Key) record. */
export const recordKey = (scope: string, key: string) => `${scopePart(scope)}:${key}`;
