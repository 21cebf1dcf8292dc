import { describe, expect, it } from "vitest";
import type { PaymentDoc } from "../../projections/payments.js";
import { recordOf } from "../../src/present/payment-record.js";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { PROJECTIONS } from "../../projections/registry.js";
import { sequentialIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { replay } from "../../src/audit/replay.js";
import { paymentsProjection } from "../../projections/payments.js";

async function storedCardCharge() {
  const clock = manualClock();
  const ids = sequentialIds();
  const engine = createEngine({ clock, ids, processors: createSimulators({ clock, ids }), liveProjections: true });
  await engine.openAccount({ external_account_id: "acct" });
  const { payment_id } = await engine.createIntent({ external_account_id: "acct", amount: "30.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus" });
  const ref = { external_account_id: "acct", payment_id };
  await engine.authorize(ref);
  await engine.capture({ ...ref, amount: "30.00" });
  await engine.refund({ ...ref, amount: "5.00" });
  return { engine, ref };
}

describe("replay", () => {
  it("reports the state after each event of a stream", async () => {
    const { engine, ref } = await storedCardCharge();
    const report = replay(await engine.store.readStream(`payment-${ref.payment_id}`));
    expect(report.steps.map((s) => [s.type, s.status_before, s.state.status])).toEqual([
      ["PaymentIntentCreated", "none", "requires_payment_method"],
      ["AuthorizationAttempted", "requires_payment_method", "requires_payment_method"],
      ["PaymentAuthorized", "requires_payment_method", "requires_capture"],
      ["CaptureAttempted", "requires_capture", "requires_capture"],
      ["PaymentCaptured", "requires_capture", "succeeded"],
      ["RefundAttempted", "succeeded", "succeeded"],
      ["PaymentRefunded", "succeeded", "succeeded"],
    ]);
    expect(report.illegal).toEqual([]);
    expect(report.final.context.amount_refunded).toBe("5.00");
  });

  it("flags an event the machine would not have allowed, and folds on past it", async () => {
    const { engine, ref } = await storedCardCharge();
    const events = await engine.store.readStream(`payment-${ref.payment_id}`);
    // a second capture slipped into the stream after the refund
    const forged = { ...events.find((e) => e.type === "PaymentCaptured")!, revision: 7, position: 99 };
    const report = replay([...events, forged]);
    expect(report.illegal.map((s) => [s.revision, s.type, s.status_before])).toEqual([[7, "PaymentCaptured", "succeeded"]]);
    expect(report.final.context.amount_refunded).toBe("5.00");
  });
});

describe("projections", () => {
  it("live updates (a subscription) reach exactly what a rebuild from position zero reaches", async () => {
    const { engine } = await storedCardCharge();
    const head = (await engine.store.readAll()).at(-1)!.position;
    // wait for the live subscription, without calling catchUp ourselves
    for (let i = 0; i < 200 && (await Promise.all(PROJECTIONS.map((p) => engine.readModels.checkpoint(p.name)))).some((c) => c < head); i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    for (const { name } of PROJECTIONS) expect(await engine.readModels.checkpoint(name)).toBe(head);
    const live = await Promise.all(PROJECTIONS.map((p) => engine.readModels.list(p.name, "")));
    for (const { name } of PROJECTIONS) await engine.projections.rebuild(name);
    expect(await Promise.all(PROJECTIONS.map((p) => engine.readModels.list(p.name, "")))).toEqual(live);
    await engine.close();
  });

  it("the payments read model holds what the record the engine returns is presented from", async () => {
    const { engine, ref } = await storedCardCharge();
    await engine.projections.catchUp();
    const doc = await engine.readModels.get<PaymentDoc>(paymentsProjection.name, ref.payment_id);
    expect(recordOf(doc!)).toEqual(await engine.getPayment(ref));
  });

  it("a store whose read models an earlier version wrote: its `payments` documents (record beside state) are dropped and payment_states folded from zero", async () => {
    const { engine, ref } = await storedCardCharge();
    await engine.projections.catchUp();
    const head = await engine.readModels.checkpoint(paymentsProjection.name);
    const { state } = (await engine.readModels.get<PaymentDoc>(paymentsProjection.name, ref.payment_id))!;
    // what the earlier version left: `payments` with the old shape, no payment_states
    await engine.readModels.reset(paymentsProjection.name);
    await engine.readModels.commitBatch([{ projection: "payments", docs: [{ key: ref.payment_id, doc: { state, record: { id: ref.payment_id } } }], checkpoint: head }]);
    const upgraded = createEngine({ store: engine.store, readModels: engine.readModels });
    await upgraded.projections.catchUp();
    expect([await upgraded.readModels.checkpoint("payments"), await upgraded.readModels.count("payments")]).toEqual([0, 0]);
    const doc = await upgraded.readModels.get<PaymentDoc>(paymentsProjection.name, ref.payment_id);
    expect(recordOf(doc!)).toEqual(await engine.getPayment(ref));
  });
});
