// The catch-up pump (src/store/pump.ts) through a store that fails: a failed read or handler is
// retried from the same checkpoint with a growing pause, never ends the subscription, and every
// event is still delivered exactly once, in order.
import { describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../src/store/port.js";
import { createPump } from "../../src/store/pump.js";

const recorded = (position: number): RecordedEvent => ({
  id: `e${position}`,
  type: "t",
  version: 1,
  data: {},
  metadata: { timestamp: "2026-01-01T00:00:00.000+00:00", request_id: position },
  stream: "s",
  revision: position - 1,
  position,
});

describe("pump under failures", () => {
  it("retries failed reads and failed handlers with backoff and delivers every event once, in order", async () => {
    const stored = Array.from({ length: 10 }, (_, i) => recorded(i + 1));
    let failReads = 3;
    const errors: unknown[] = [];
    const pump = createPump(
      async (after, maxCount) => {
        if (failReads-- > 0) throw new Error("connection terminated");
        return stored.filter((e) => e.position > after).slice(0, maxCount);
      },
      { batchSize: 4, retryMs: 1, onError: (e) => errors.push(e) },
    );
    const got: number[] = [];
    let failOn5 = true;
    const done = new Promise<void>((resolve) => {
      pump.subscribe({}, (e) => {
        if (e.position === 5 && failOn5) {
          failOn5 = false;
          throw new Error("handler failed once");
        }
        got.push(e.position);
        if (got.length === 10) resolve();
      });
    });
    await done;
    expect(got).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(errors.map(String)).toEqual([...Array(3).fill("Error: connection terminated"), "Error: handler failed once"]);
    await pump.closeAll();
  });
});

describe("pump and local appends not visible yet", () => {
  it("looks again soon, not after the poll interval, for a local append the read did not return yet", async () => {
    // PostgreSQL shows a committed append only once every older transaction has ended: the first
    // reads after notify(1) come back empty although position 1 is committed.
    let hidden = 3;
    const pump = createPump(async (after) => (after < 1 && hidden-- <= 0 ? [recorded(1)] : []), { pollMs: 60_000 });
    const got: number[] = [];
    const delivered = new Promise<void>((resolve) => {
      pump.subscribe({}, (e) => {
        got.push(e.position);
        resolve();
      });
    });
    pump.notify(1);
    await delivered; // without the early look this waits for the 60 s poll (the test times out)
    expect(got).toEqual([1]);
    expect(hidden).toBeLessThan(0);
    await pump.closeAll();
  });
});

describe("pump reads shared", () => {
  it("subscribers at the same checkpoint woken together share one read; a notify after it is read again", async () => {
    const stored: RecordedEvent[] = [];
    const reads: number[] = [];
    const pump = createPump(async (after, maxCount) => (reads.push(after), stored.filter((e) => e.position > after).slice(0, maxCount)), { pollMs: 60_000 });
    const got: [string, number][] = [];
    const until = async (n: number) => {
      while (got.length < n) await new Promise((r) => setTimeout(r, 1));
    };
    pump.subscribe({}, (e) => void got.push(["a", e.position]));
    pump.subscribe({}, (e) => void got.push(["b", e.position]));
    await new Promise((r) => setTimeout(r, 20));
    reads.length = 0;
    stored.push(recorded(1));
    pump.notify(1);
    await until(2);
    expect(reads).toEqual([0]); // one read for both
    stored.push(recorded(2));
    pump.notify(2);
    stored.push(recorded(3));
    pump.notify(3); // while the read for 2 may be shared: read again, 3 is not missed
    await until(6);
    expect(got.filter(([s]) => s === "a").map(([, p]) => p)).toEqual([1, 2, 3]);
    expect(got.filter(([s]) => s === "b").map(([, p]) => p)).toEqual([1, 2, 3]);
    await pump.closeAll();
  });
});
