// The benchmarks' load gate (scripts/bench/lib.ts): a row starts only below the load limit, after
// waiting for it at most maxWaitMs; still above it then, the row is refused. Time is simulated.
import { describe, expect, it } from "vitest";
import { waitForLoad } from "../../scripts/bench/lib.js";

/** A fake machine: the load readings in order (the last one repeats), time moving only by sleep. */
function machine(loads: number[]) {
  let t = 0;
  let i = 0;
  const slept: number[] = [];
  return {
    slept,
    options: {
      load: () => loads[Math.min(i++, loads.length - 1)]!,
      now: () => t,
      sleep: async (ms: number) => {
        slept.push(ms);
        t += ms;
      },
    },
  };
}

describe("waitForLoad", () => {
  it("lets a row start at once on a quiet machine", async () => {
    const m = machine([0.4]);
    expect(await waitForLoad(m.options)).toEqual({ load: 0.4, waitedS: 0, refused: false });
    expect(m.slept).toEqual([]);
  });

  it("waits, polling, until the load falls below the limit", async () => {
    const m = machine([2.5, 1.6, 1.0, 0.97]);
    const gate = await waitForLoad({ ...m.options, pollMs: 5_000 });
    // exactly 1.0 is not below the limit: one more poll
    expect(gate).toEqual({ load: 0.97, waitedS: 15, refused: false });
    expect(m.slept).toEqual([5_000, 5_000, 5_000]);
  });

  it("refuses when the load is still above the limit after the longest wait, naming that load", async () => {
    const m = machine([3, 2.2, 1.4]);
    const gate = await waitForLoad({ ...m.options, pollMs: 60_000, maxWaitMs: 300_000 });
    expect(gate).toEqual({ load: 1.4, waitedS: 300, refused: true });
    // the last sleep never goes past the longest wait
    expect(m.slept.reduce((a, b) => a + b, 0)).toBe(300_000);
  });

  it("does not refuse a load of exactly the limit at the end of the wait (refused means above it)", async () => {
    const m = machine([1.0]);
    expect(await waitForLoad({ ...m.options, pollMs: 100_000, maxWaitMs: 200_000 })).toEqual({ load: 1.0, waitedS: 200, refused: false });
  });

  it("uses a limit other than 1.0 when given one", async () => {
    const m = machine([1.5]);
    expect((await waitForLoad({ ...m.options, limit: 2 })).refused).toBe(false);
  });
});
