// Stored-card flows through the engine's library API (create + authorize + capture: three
// commands, three appended events), driven by a number of concurrent clients.
import type { Engine } from "../../src/engine.js";

export const EVENTS_PER_FLOW = 3;
export const ACCOUNT = "acct_bench";

export async function openBenchAccount(engine: Engine): Promise<void> {
  await engine.openAccount({ external_account_id: ACCOUNT, processor: "A", currency: "USD" });
}

/** One stored-card charge with manual capture, captured in full (the sandbox token pm_card_visa). */
export async function storedCardFlow(engine: Engine): Promise<void> {
  const created = await engine.createIntent({
    external_account_id: ACCOUNT,
    amount: "10.00",
    payment_method_types: "card",
    capture_method: "manual",
    payment_method_id: "pm_card_visa",
    external_customer_id: "cus_bench",
  });
  const ref = { external_account_id: ACCOUNT, payment_id: created.payment_id };
  const authorized = await engine.authorize(ref);
  if (authorized.status !== "requires_capture") throw new Error(`authorize left ${authorized.status}`);
  const captured = await engine.capture({ ...ref, amount: "10.00" });
  if (captured.status !== "succeeded") throw new Error(`capture left ${captured.status}`);
}

/** Runs `count` flows with `concurrency` clients; calls `every` after each `interval` flows. */
export async function runFlows(engine: Engine, count: number, concurrency: number, every?: { interval: number; run: (done: number) => Promise<void> | void }): Promise<void> {
  let started = 0;
  let done = 0;
  let pause: Promise<void> = Promise.resolve();
  const client = async () => {
    while (started < count) {
      started++;
      await pause;
      await storedCardFlow(engine);
      done++;
      if (every && done % every.interval === 0) pause = Promise.resolve(every.run(done));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  await pause;
}

/** Flows completed per second by `concurrency` clients starting flows for `ms` milliseconds. */
export async function flowsPerSecond(engine: Engine, ms: number, concurrency: number): Promise<number> {
  let done = 0;
  const start = performance.now();
  const client = async () => {
    while (performance.now() - start < ms) {
      await storedCardFlow(engine);
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return (done * 1000) / (performance.now() - start);
}
