// src/coalesced.ts under any interleaving of calls, runs ending (well or failing) and turns of the
// microtask queue: one run at a time, every call answered, by a run that started after the call
// (so it carries every change made before the call), a failure only to the calls that joined it.
import fc from "fast-check";
import { expect, it } from "vitest";
import { coalesced } from "../src/coalesced.js";

const turns = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

it("one run at a time; each call gets the outcome of a run started after it", async () => {
  const step = fc.constantFrom("call", "succeed", "fail", "turns");
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
      let started = 0;
      let running = 0;
      let mostRunning = 0;
      const runs: { id: number; end: (ok: boolean) => void }[] = [];
      const call = coalesced<number>(() => {
        const id = ++started;
        mostRunning = Math.max(mostRunning, ++running);
        return new Promise<number>((resolve, reject) => runs.push({ id, end: (ok) => (running--, ok ? resolve(id) : reject(new Error(String(id)))) }));
      });
      const calls: { startedBefore: number; outcome?: { ok: boolean; run: number } }[] = [];
      for (const s of steps) {
        if (s === "call") {
          const made: (typeof calls)[number] = { startedBefore: started };
          calls.push(made);
          call().then(
            (run) => (made.outcome = { ok: true, run }),
            (error: Error) => (made.outcome = { ok: false, run: Number(error.message) }),
          );
        } else if (s === "turns") await turns();
        else runs.shift()?.end(s === "succeed");
      }
      // the rest succeed, one by one
      for (let i = 0; i < 100 && (runs.length || calls.some((c) => !c.outcome)); i++) {
        await turns();
        runs.shift()?.end(true);
      }
      await turns();
      expect(mostRunning).toBeLessThanOrEqual(1);
      for (const c of calls) {
        expect(c.outcome).toBeDefined();
        expect(c.outcome!.run).toBeGreaterThan(c.startedBefore);
      }
      await expect(call.settled()).resolves.toBeUndefined();
    }),
    { numRuns: 2_000 },
  );
});
