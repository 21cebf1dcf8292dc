// Ids are injected so that tests and replays are exact. Event ids are UUIDs (KurrentDB requires
// them); resource ids carry a readable prefix; request ids are integers (spec §2.1 `request_id`).
import { randomFillSync, randomUUID } from "node:crypto";

export interface Ids {
  /** A resource id with a prefix, e.g. id("pi") -> "pi_3kF9...". */
  id(prefix: string): string;
  uuid(): string;
  /** A positive integer, unique per API request, safe as a JSON number. */
  requestId(): number;
  /** A secret token (client secrets, API keys). */
  secret(prefix: string): string;
}

const COUNTER_HEX = Array.from({ length: 0x1000 }, (_, i) => i.toString(16).padStart(3, "0"));

/**
 * Time-ordered UUIDs (version 7, RFC 9562): 48 bits of milliseconds, a 12-bit counter, then the
 * variant and 62 random bits (those of a random v4 UUID). Event ids are the stores' unique key: ids
 * that grow with time are added at the end of that index instead of at a random page of it, which
 * takes about 40% off the pages a SQLite group commit writes and fsyncs. The counter keeps one
 * process's ids increasing within a millisecond; past 4,096 in one millisecond the timestamp moves
 * on by one.
 */
export function uuidV7(now: () => number = Date.now): () => string {
  let ms = -1;
  let counter = 0;
  let prefix = "";
  return () => {
    const t = now();
    if (t > ms) {
      ms = t;
      counter = 0;
    } else if (++counter > 0xfff) {
      ms++;
      counter = 0;
    }
    if (counter === 0) {
      const time = ms.toString(16).padStart(12, "0");
      prefix = `${time.slice(0, 8)}-${time.slice(8)}-7`;
    }
    // randomUUID's tail from its variant on: xxxx-xxxxxxxxxxxx with the variant bits set
    return prefix + COUNTER_HEX[counter]! + randomUUID().slice(18);
  };
}

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** `length` random base62 characters; the random bytes are drawn 4 KB at a time (one getrandom per ~200 ids, not one each). */
const pool = Buffer.alloc(4096);
let poolUsed = pool.length;
function base62(length: number): string {
  if (poolUsed + length > pool.length) {
    randomFillSync(pool);
    poolUsed = 0;
  }
  let s = "";
  for (let i = poolUsed; i < poolUsed + length; i++) s += ALPHABET[pool[i]! % 62];
  poolUsed += length;
  return s;
}

export function randomIds(): Ids {
  // time-ordered and unique across processes: ms since epoch * 2^11 + 11 random bits < 2^53
  let last = 0;
  return {
    id: (prefix) => `${prefix}_${base62(20)}`,
    uuid: uuidV7(),
    requestId() {
      const next = Math.max(Date.now() * 2048 + Math.floor(Math.random() * 2048), last + 1);
      last = next;
      return next;
    },
    secret: (prefix) => `${prefix}_${base62(32)}`,
  };
}

/** The store's sequence (EventStore.reserveIds) request ids are taken from; an import moves it past the imported events' ids. */
export const REQUEST_ID_SEQUENCE = "request_id";

/** Ids the counter may give; randomIds' time-ordered ones are above it (ms since 1970 times 2^11 is past 2^51). */
const COUNTED_BELOW = 2 ** 40;

/** What storeRequestIds needs of a store (its EventStore). */
interface CountedStore {
  reserveIds(sequence: string, count: number): Promise<number>;
  readAll(options: { after: number; maxCount: number }): Promise<Array<{ position: number; metadata: { request_id: number } }>>;
}

/**
 * Request ids from the store's counter (blockRequestIds). A store whose counter never gave one but
 * that holds events (built by release 0.1.0's import, which did not move it, then copied) has it
 * moved past its events' ids first, read once: ids handed out again would make two requests one.
 */
export async function storeRequestIds(base: Ids, store: CountedStore, blockSize?: number): Promise<Ids> {
  if ((await store.reserveIds(REQUEST_ID_SEQUENCE, 0)) === 1) {
    let highest = 0;
    for (let after = 0; ; ) {
      const batch = await store.readAll({ after, maxCount: 5_000 });
      // a time-ordered id (randomIds: a library's engine, a fallback) is far above any the counter gives: none to pass
      for (const e of batch) if (e.metadata.request_id < COUNTED_BELOW) highest = Math.max(highest, e.metadata.request_id);
      if (batch.length < 5_000) break;
      after = batch[batch.length - 1]!.position;
    }
    const next = await store.reserveIds(REQUEST_ID_SEQUENCE, 0);
    if (next <= highest) await store.reserveIds(REQUEST_ID_SEQUENCE, highest + 1 - next);
  }
  return blockRequestIds(base, (count) => store.reserveIds(REQUEST_ID_SEQUENCE, count), blockSize);
}

/**
 * Request ids unique across processes sharing a store: each process takes blocks of consecutive
 * integers reserved in the store (EventStore.reserveIds). requestId() must stay synchronous (the
 * HTTP server asks for one per request), so the next block is reserved once half of the current
 * one is used. Should both run out while the store is unreachable, ids fall back to `base`'s
 * time-ordered ones (~2^51, far above any block), unique in practice.
 */
export async function blockRequestIds(base: Ids, reserve: (count: number) => Promise<number>, blockSize = 1000): Promise<Ids> {
  let next = await reserve(blockSize);
  let end = next + blockSize;
  let spare: { first: number; end: number } | undefined;
  let reserving = false;
  function reserveSpare() {
    if (spare || reserving) return;
    reserving = true;
    reserve(blockSize)
      .then((first) => void (spare = { first, end: first + blockSize }))
      .catch(() => undefined) // tried again on the next request id
      .finally(() => (reserving = false));
  }
  return {
    ...base,
    requestId() {
      if (next >= end && spare) {
        ({ first: next, end } = spare);
        spare = undefined;
      }
      const id = next < end ? next++ : base.requestId();
      // the next block once half of this one is used: ahead of need, and none taken by a process
      // (a CLI command) that uses a few
      if (end - next <= blockSize / 2) reserveSpare();
      return id;
    },
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
