// In-memory Idempotency-Key records.
import { holdsKey, keepsKey, IdempotencyClaimLost, type IdempotencyRecord, type IdempotencyStore } from "../port/idempotency.js";

export interface MemoryIdempotency extends IdempotencyStore {
  /** Replaces the record of the same key and token inside an append; throws IdempotencyClaimLost when the key is no longer this token's. */
  replaceClaim(record: IdempotencyRecord): void;
}

export function createMemoryIdempotency(): MemoryIdempotency {
  const records = new Map<string, IdempotencyRecord>();

  /** Replaces the record of the same key and token; false when the key is no longer this token's. */
  function save(record: IdempotencyRecord): boolean {
    if (records.get(record.key)?.token !== record.token) return false;
    records.set(record.key, structuredClone(record));
    return true;
  }

  return {
    replaceClaim(record) {
      if (!save(record)) throw new IdempotencyClaimLost(record.key);
    },
    async claimIdempotency(claim, now) {
      const held = records.get(claim.key);
      if (held && holdsKey(held, now)) return structuredClone(held);
      records.set(claim.key, structuredClone(claim));
      return undefined;
    },
    async saveIdempotency(record) {
      return save(record);
    },
    async releaseIdempotency(key, token, expires_at) {
      const held = records.get(key);
      if (held?.token !== token || held.state !== "in_flight") return;
      if (held.status === 0) records.delete(key);
      else records.set(key, { ...held, state: "done", expires_at });
    },
    async readIdempotency(key) {
      const r = records.get(key);
      return r && structuredClone(r);
    },
    async countIdempotency(scope, now) {
      let n = 0;
      for (const [k, r] of records) if (k.startsWith(`${scope}:`) && keepsKey(r, now)) n++;
      return n;
    },
    async nextIdempotencyRelease(scope, now) {
      let first: string | null = null;
      for (const [k, r] of records) if (k.startsWith(`${scope}:`) && r.expires_at >= now && r.state === "done" && (first === null || r.expires_at < first)) first = r.expires_at;
      return first;
    },
    async purgeIdempotency(now) {
      let n = 0;
      for (const [k, r] of records) if (!holdsKey(r, now) && records.delete(k)) n++;
      return n;
    },
  };
}
