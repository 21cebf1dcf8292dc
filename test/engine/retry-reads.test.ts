// A command under an Idempotency-Key looks for an earlier try of that key on the payment's stream
// only when the key made a processor call there (Loaded.attemptKeys): a first-time key, the common
// case, is decided on the cached payment with no read of its stream; a retry of a key whose call
// was made reads it (its earlier try may have been made by another process).
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import type { EventStore } from "../../src/store/port.js";

const clock = manualClock();
const raw = createMemoryStore();
/** Payment streams read from their start. */
const reads: string[] = [];
const readStream: EventStore["readStream"] = (stream, options) => {
  if (stream.startsWith("payment-") && !options?.fromRevision) reads.push(stream); // the whole stream
  return raw.readStream(stream, options);
};
const store = Object.assign(Object.create(raw) as EventStore, { readStream });
const engine = createEngine({ store, clock, ids: sequentialIds(), processors: createSimulators({ clock, ids: sequentialIds(500_000) }) });
await engine.openAccount({ external_account_id: "acct_r", processor: "A" });
const ref = { external_account_id: "acct_r" };

async function authorizedPayment() {
  const { payment_id } = await engine.createIntent({ ...ref, amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_r" }, { idempotency_key: "create" });
  await engine.authorize({ ...ref, payment_id }, { idempotency_key: "auth" });
  return payment_id;
}

describe("an Idempotency-Key seen for the first time on a payment", () => {
  it("a capture (a processor call) and a refused one read none of the payment's stream from its start", async () => {
    const payment_id = await authorizedPayment();
    reads.length = 0;
    const captured = await engine.capture({ ...ref, payment_id, amount: "10.00" }, { idempotency_key: "capture-1" });
    expect(captured.status).toBe("succeeded");
    expect(reads).toEqual([]);
    await expect(engine.capture({ ...ref, payment_id, amount: "10.00" }, { idempotency_key: "capture-2" })).rejects.toMatchObject({ code: "payment_intent_unexpected_state" });
    expect(reads).toEqual([]);
  });

  it("the same key again after its call was made: its stream is read, and it is answered as that call left it", async () => {
    const payment_id = await authorizedPayment();
    await engine.capture({ ...ref, payment_id, amount: "4.00" }, { idempotency_key: "capture-3" });
    reads.length = 0;
    let replayed = false;
    const again = await engine.capture({ ...ref, payment_id, amount: "4.00" }, { idempotency_key: "capture-3", answeredFromStore: () => void (replayed = true) });
    expect([again.status, again.amount_captured, replayed]).toEqual(["succeeded", "4.00", true]);
    expect(reads).toEqual([`payment-${payment_id}`]);
  });
});
