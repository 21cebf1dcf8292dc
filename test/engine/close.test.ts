// engine.close() leaves nothing of the engine waiting: a blocking authorization ends with
// EngineClosed, and the simulators the engine made itself (no processors given) drop their timers
// (the simulated shopper's 120 s timeout kept a library caller's process alive after close()).
import { expect, test } from "vitest";
import { manualClock, type Clock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";

/** A clock that counts its timers still set (neither fired nor cancelled). */
function countingClock(inner: Clock) {
  const live = new Set<object>();
  const clock: Clock = {
    now: () => inner.now(),
    setTimer(ms, fn) {
      const timer = {};
      live.add(timer);
      const cancel = inner.setTimer(ms, () => (live.delete(timer), fn()));
      return () => (live.delete(timer), cancel());
    },
  };
  return { clock, live: () => live.size };
}

test("close(): a blocking auth waiting for its shopper ends with EngineClosed and the engine's own simulators keep no timer", async () => {
  const counting = countingClock(manualClock());
  const engine = createEngine({ clock: counting.clock, ids: sequentialIds() });
  await engine.openAccount({ external_account_id: "acct_1" });
  const { terminal_id } = await engine.registerTerminal({ external_account_id: "acct_1", terminal_type: "A_sync" });
  const { payment_id } = await engine.createIntent({ external_account_id: "acct_1", amount: "5.00", payment_method_types: "card_present", capture_method: "manual" });
  const auth = engine.authorize({ external_account_id: "acct_1", payment_id, terminal_id }).catch((e: unknown) => e);
  for (let i = 0; i < 100 && counting.live() < 2; i++) await new Promise((r) => setImmediate(r));
  expect(counting.live()).toBeGreaterThanOrEqual(2); // the engine's wait and the simulated shopper's timeout
  await engine.close();
  expect(await auth).toMatchObject({ name: "EngineClosed", code: "service_stopping" });
  expect(counting.live()).toBe(0);
});

test("a call after close() is refused with EngineClosed and not run; a second close() waits for the first", async () => {
  const engine = createEngine({ clock: manualClock(), ids: sequentialIds() });
  await engine.openAccount({ external_account_id: "acct_1" });
  const { payment_id } = await engine.createIntent({ external_account_id: "acct_1", amount: "5.00", payment_method_types: "card", capture_method: "manual" });
  await Promise.all([engine.close(), engine.close()]);
  await expect(engine.getPayment({ external_account_id: "acct_1", payment_id })).rejects.toMatchObject({ name: "EngineClosed", code: "service_stopping", status: 503 });
  await expect(engine.cancel({ external_account_id: "acct_1", payment_id })).rejects.toThrow(/engine\.cancel\(\) was called after engine\.close\(\)/);
  expect(() => engine.startReconciler(1000)).toThrow(/engine\.startReconciler\(\) was called after engine\.close\(\)/);
  await engine.close();
});
