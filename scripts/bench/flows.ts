// Stored-card flows through the engine's library API (create + authorize + capture: three
// commands, five appends of one event each: created, then an attempt before each processor call
// and its outcome), driven by a number of concurrent clients. The card is a
// real card on file: saved once for the bench customer through the processor B client SDK.
import type { Engine } from "../../src/engine.js";

export const EVENTS_PER_FLOW = 5;
export const ACCOUNT = "acct_bench";
export const CUSTOMER = "cus_bench";

/** Opens the bench account and saves a card on file for its customer; returns its payment_method_id. */
export async function openBenchAccount(engine: Engine): Promise<string> {
  await engine.openAccount({ external_account_id: ACCOUNT, processor: "B", currency: "USD" });
  const intent = await engine.createIntent({ external_account_id: ACCOUNT, amount: "1.00", payment_method_types: "card", capture_method: "manual", external_customer_id: CUSTOMER, allow_saving_card: true });
  await engine.collectPaymentMethod({ client_secret: intent.client_secret!, card_number: "4242424242424242" });
  // the card form's collect also authorizes the card
  const ref = { external_account_id: ACCOUNT, payment_id: intent.payment_id };
  await engine.capture({ ...ref, amount: "1.00" });
  return (await engine.saveCard({ ...ref, external_customer_id: CUSTOMER })).payment_method_id;
}

/** One charge of the card on file with manual capture, captured in full. */
export async function storedCardFlow(engine: Engine, paymentMethodId: string): Promise<void> {
  const created = await engine.createIntent({
    external_account_id: ACCOUNT,
    amount: "10.00",
    payment_method_types: "card",
    capture_method: "manual",
    payment_method_id: paymentMethodId,
    external_customer_id: CUSTOMER,
  });
  const ref = { external_account_id: ACCOUNT, payment_id: created.payment_id };
  const authorized = await engine.authorize(ref);
  if (authorized.status !== "requires_capture") throw new Error(`authorize left ${authorized.status}`);
  const captured = await engine.capture({ ...ref, amount: "10.00" });
  if (captured.status !== "succeeded") throw new Error(`capture left ${captured.status}`);
}

/** Runs `count` flows with `concurrency` clients; calls `every` after each `interval` flows. */
export async function runFlows(
  engine: Engine,
  paymentMethodId: string,
  count: number,
  concurrency: number,
  every?: { interval: number; run: (done: number) => Promise<void> | void },
): Promise<void> {
  let started = 0;
  let done = 0;
  let pause: Promise<void> = Promise.resolve();
  const client = async () => {
    while (started < count) {
      started++;
      await pause;
      await storedCardFlow(engine, paymentMethodId);
      done++;
      if (every && done % every.interval === 0) pause = Promise.resolve(every.run(done));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  await pause;
}

/** Flows completed per second by `concurrency` clients starting flows for `ms` milliseconds. */
export async function flowsPerSecond(engine: Engine, paymentMethodId: string, ms: number, concurrency: number): Promise<number> {
  let done = 0;
  const start = performance.now();
  const client = async () => {
    while (performance.now() - start < ms) {
      await storedCardFlow(engine, paymentMethodId);
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return (done * 1000) / (performance.now() - start);
}
