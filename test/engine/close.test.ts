// engine.close() leaves nothing of the engine waiting: a blocking authorization ends with
// EngineClosed, and the simulators the engine made itself (no processors given) drop their timers
// (the simulated shopper's 120 s timeout kept a library caller's process alive after close()).
import { expect, test } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { manualClock, systemClock, type Clock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { randomIds, sequentialIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";

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

test("close() lets the calls under way end first: their processor calls' outcomes are recorded and answered, not cut beneath them by a closed store", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cardflow-close-"));
  const path = join(dir, "events.db");
  const { events, readModels } = createSqliteStore({ path });
  const sims = createSimulators({ clock: systemClock, ids: randomIds(), processorLatencyMs: 300 });
  const engine = createEngine({ store: events, readModels, processors: sims });
  await engine.openAccount({ external_account_id: "acct_1", processor: "B" });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push((await engine.createIntent({ external_account_id: "acct_1", amount: "5.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" })).payment_id);
  }
  const calls = ids.map((payment_id) => engine.authorize({ external_account_id: "acct_1", payment_id }).catch((e: unknown) => e));
  await new Promise((r) => setTimeout(r, 100)); // every charge at the processor
  await engine.close();
  for (const answer of await Promise.all(calls)) expect(answer).toMatchObject({ status: "succeeded", amount_captured: "5.00" });
  sims.stop();
  // the store as it was left: each attempt closed by its outcome
  const reopened = createSqliteStore({ path });
  for (const payment_id of ids) expect((await reopened.events.readStream(`payment-${payment_id}`)).map((e) => e.type)).toEqual(["PaymentIntentCreated", "AuthorizationAttempted", "PaymentCaptured"]);
  await reopened.events.close();
  await reopened.readModels.close();
  rmSync(dir, { recursive: true, force: true });
});

test("close(step, by) waits for the calls under way only until `by` (a served process's deadline): what they left open is the reconciler's", async () => {
  const sims = createSimulators({ clock: systemClock, ids: randomIds(), processorLatencyMs: 60_000 });
  const engine = createEngine({ processors: sims });
  await engine.openAccount({ external_account_id: "acct_1", processor: "B" });
  const { payment_id } = await engine.createIntent({ external_account_id: "acct_1", amount: "5.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
  void engine.authorize({ external_account_id: "acct_1", payment_id }).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 50));
  const steps: string[] = [];
  await engine.close((part) => steps.push(part), Date.now() + 200); // resolves: the processor answers only in a minute
  expect(steps[0]).toBe("the calls under way");
  expect((await engine.store.readStream(`payment-${payment_id}`)).map((e) => e.type)).toEqual(["PaymentIntentCreated", "AuthorizationAttempted"]);
  sims.stop();
});
