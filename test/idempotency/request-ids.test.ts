// Request ids from blocks reserved in the store (src/ids.ts blockRequestIds): unique across
// "processes" sharing a store, synchronous, and still integers when the store cannot be reached.
import { describe, expect, it } from "vitest";
import { blockRequestIds, randomIds, REQUEST_ID_SEQUENCE, storeRequestIds } from "../../src/ids.js";
import { createMemoryStore } from "../../src/store/memory/index.js";

describe("request ids from store blocks", () => {
  it("two processes on one store never hand out the same id, across many blocks", async () => {
    const store = createMemoryStore();
    const reserve = (n: number) => store.reserveIds("request_id", n);
    const [a, b] = await Promise.all([blockRequestIds(randomIds(), reserve, 10), blockRequestIds(randomIds(), reserve, 10)]);
    const seen: number[] = [];
    for (let i = 0; i < 200; i++) {
      seen.push(a.requestId(), b.requestId(), b.requestId());
      if (i % 3 === 0) await new Promise((r) => setImmediate(r)); // let spare blocks arrive
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.every((id) => Number.isSafeInteger(id) && id > 0)).toBe(true);
    expect(Math.max(...seen)).toBeLessThan(1000); // from the blocks, not the fallback
  });

  it("keeps answering with integers when the store is gone and both blocks are used; reserves the next block only once half of one is used", async () => {
    let up = true;
    let next = 1;
    const ids = await blockRequestIds(randomIds(), async (n) => {
      if (!up) throw new Error("store unreachable");
      const first = next;
      next += n;
      return first;
    }, 4);
    expect(next).toBe(5); // one block: the next is reserved once half of it is used
    const early = [ids.requestId(), ids.requestId()];
    await new Promise((r) => setImmediate(r));
    expect(next).toBe(9);
    up = false;
    const got = [...early, ...Array.from({ length: 10 }, () => ids.requestId())];
    expect(got.slice(0, 8)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(new Set(got).size).toBe(12);
    expect(got.slice(8).every((id) => Number.isSafeInteger(id) && id > 2 ** 40)).toBe(true);
    await new Promise((r) => setImmediate(r)); // the failed reservation settles
    up = true;
    ids.requestId(); // reserves again
    await new Promise((r) => setImmediate(r));
    expect(ids.requestId()).toBe(9);
  });

  it("a store whose counter never gave an id but that holds events (0.1.0's import did not move it) gives ids past its events' first", async () => {
    const store = createMemoryStore();
    const event = (request_id: number) => ({ id: crypto.randomUUID(), type: "Noted", version: 1, data: {}, metadata: { timestamp: "2026-01-01T00:00:00.000Z", request_id } });
    // a time-ordered id (randomIds) is no id the counter would give: not passed
    await store.append("s-1", [event(5), event(999_999), event(randomIds().requestId()), event(12)], { expectedRevision: "no_stream" });
    const ids = await storeRequestIds(randomIds(), store, 10);
    expect(ids.requestId()).toBe(1_000_000);
    // once the counter gives ids, the events are not read again
    let reads = 0;
    const counted = { ...store, readAll: (...args: Parameters<typeof store.readAll>) => (reads++, store.readAll(...args)) };
    expect((await storeRequestIds(randomIds(), counted, 10)).requestId()).toBeGreaterThan(1_000_000);
    expect(reads).toBe(0);
    expect(await store.reserveIds(REQUEST_ID_SEQUENCE, 0)).toBeGreaterThan(1_000_000);
  });
});
