// Ids are injected so that tests and replays are exact. Event ids are UUIDs (KurrentDB requires
// them); resource ids carry a readable prefix; request ids are integers (spec §2.1 `request_id`).
import { randomBytes, randomUUID } from "node:crypto";

export interface Ids {
  /** A resource id with a prefix, e.g. id("pi") -> "pi_3kF9...". */
  id(prefix: string): string;
  uuid(): string;
  /** A positive integer, unique per API request, safe as a JSON number. */
  requestId(): number;
  /** A secret token (client secrets, API keys). */
  secret(prefix: string): string;
}

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const base62 = (bytes: Buffer) => [...bytes].map((b) => ALPHABET[b % 62]).join("");

export function randomIds(): Ids {
  // time-ordered and unique across processes: ms since epoch * 2^11 + 11 random bits < 2^53
  let last = 0;
  return {
    id: (prefix) => `${prefix}_${base62(randomBytes(20))}`,
    uuid: () => randomUUID(),
    requestId() {
      const next = Math.max(Date.now() * 2048 + Math.floor(Math.random() * 2048), last + 1);
      last = next;
      return next;
    },
    secret: (prefix) => `${prefix}_${base62(randomBytes(32))}`,
  };
}

/** Deterministic ids for tests and exact replays: a counter per kind. */
export function sequentialIds(seed = 0): Ids {
  let n = seed;
  const next = () => ++n;
  return {
    id: (prefix) => `${prefix}_${String(next()).padStart(8, "0")}`,
    uuid: () => `00000000-0000-4000-8000-${next().toString(16).padStart(12, "0")}`,
    requestId: () => next(),
    secret: (prefix) => `${prefix}_secret_${String(next()).padStart(8, "0")}`,
  };
}
