// A processor call's outcome is recorded at the time the processor answered, not at the time the
// call was opened: an as-of moment while the call was on its way shows the payment as it then was.
import { describe, expect, it } from "vitest";
import { asOf } from "../../src/audit/as-of.js";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { randomIds } from "../../src/ids.js";
import type { Processors } from "../../src/processors/port.js";
import { createSimulators } from "../../src/processors/simulator.js";

describe("the time of a processor's answer", () => {
  it("a charge answered 1.5 s after its attempt: the outcome carries the later time, and as-of in between shows the payment before it", async () => {
    const clock = manualClock();
    const sims = createSimulators({ clock, ids: randomIds() });
    // the processor takes 1.5 s to answer (the test's clock moves while the call is on its way)
    const processors: Processors = {
      connect: (report) => sims.connect(report),
      get: (p) => ({ ...sims.get(p), chargeStoredCard: async (req) => (await clock.advance(1_500), sims.get(p).chargeStoredCard(req)) }),
    };
    const engine = createEngine({ clock, processors });
    await engine.openAccount({ external_account_id: "acct_t", processor: "B" });
    const { payment_id } = await engine.createIntent({ external_account_id: "acct_t", amount: "20.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c" });
    await engine.authorize({ external_account_id: "acct_t", payment_id });
    const events = await engine.store.readStream(`payment-${payment_id}`);
    const [attempted, authorized] = [events.find((e) => e.type === "AuthorizationAttempted")!, events.find((e) => e.type === "PaymentAuthorized")!];
    expect(Date.parse(authorized.metadata.timestamp) - Date.parse(attempted.metadata.timestamp)).toBe(1_500);
    const during = new Date(Date.parse(attempted.metadata.timestamp) + 700).toISOString();
    expect((await asOf(engine.store, payment_id, during))?.record.status).toBe("requires_payment_method");
    expect((await asOf(engine.store, payment_id, authorized.metadata.timestamp))?.record.status).toBe("requires_capture");
  });
});
