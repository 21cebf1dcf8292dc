// A card-form collect (processor B client SDK, card not present) processes the payment in the same
// command: the card collected and the authorization attempted go into the store in ONE append with
// one expected revision. Once they were two appends, so a request of another process landing
// between them (a cancel) made the collect answer 409 after its card had been recorded: an effect
// without an acknowledgement. Here another engine on the same store (another process) cancels
// right before the collect's append that carries the attempt.
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { TransitionNotAllowed } from "../../src/errors.js";
import { randomIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import type { EventStore } from "../../src/store/port.js";

/** A store that records each append's event types, and runs `before` ahead of the first append carrying an attempt. */
function recordingStore(before?: () => Promise<void>) {
  const store = createMemoryStore();
  const appends: string[][] = [];
  let interfered = false;
  const append: EventStore["append"] = async (stream, events, options) => {
    const types = events.map((e) => e.type);
    if (before && !interfered && types.includes("AuthorizationAttempted")) {
      interfered = true;
      await before();
    }
    appends.push(types);
    return store.append(stream, events, options);
  };
  return { store: Object.assign(Object.create(store) as EventStore, { append }), raw: store, appends };
}

async function cardFormPayment(engine: ReturnType<typeof createEngine>) {
  await engine.openAccount({ external_account_id: "acct_b", processor: "B" }).catch(() => undefined);
  return engine.createIntent({ external_account_id: "acct_b", amount: "12.00", payment_method_types: "card", capture_method: "manual", external_customer_id: "cus_b" });
}

describe("card-form collect: the card and the authorization attempt in one append", () => {
  it("one append carries PaymentMethodCollected and AuthorizationAttempted", async () => {
    const { store, appends } = recordingStore();
    const engine = createEngine({ store, processors: createSimulators({ clock: systemClock, ids: randomIds() }) });
    const { client_secret } = await cardFormPayment(engine);
    const paid = await engine.collectPaymentMethod({ client_secret: client_secret! });
    expect(paid.status).toBe("requires_capture");
    expect(appends).toContainEqual(["PaymentMethodCollected", "AuthorizationAttempted"]);
    expect(appends.filter((types) => types.includes("PaymentMethodCollected"))).toHaveLength(1);
  });

  it("another process's cancel just before it: the collect is refused and recorded nothing", async () => {
    let other: ReturnType<typeof createEngine> | undefined;
    let paymentId = "";
    const { store, raw } = recordingStore(async () => void (await other!.cancel({ external_account_id: "acct_b", payment_id: paymentId })));
    const sims = createSimulators({ clock: systemClock, ids: randomIds() });
    const engine = createEngine({ store, processors: sims });
    other = createEngine({ store: raw, processors: sims });
    const { client_secret, payment_id } = await cardFormPayment(engine);
    paymentId = payment_id;
    await expect(engine.collectPaymentMethod({ client_secret: client_secret! })).rejects.toBeInstanceOf(TransitionNotAllowed);
    const types = (await raw.readStream(`payment-${payment_id}`)).map((e) => e.type);
    expect(types).toEqual(["PaymentIntentCreated", "PaymentCanceled"]);
    expect(sims.ledger.entries()).toEqual([]);
  });
});
