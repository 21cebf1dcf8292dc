// The reconciler resolves each open call on its own: one whose processor's lookup fails (a
// processor down, an adapter answering what no outcome is) is reported as not resolved and left
// open for the next pass, and every other call is resolved in the same pass. One failing lookup
// used to end the pass, every pass: no call of any processor was resolved until it answered.
import { afterAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { randomIds, sequentialIds } from "../../src/ids.js";
import { memorySide } from "../../src/processors/processor-side.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import { processesOnOneStore, until } from "./processes-on-one-store.js";
import { withReplacedCalls } from "./replaced-calls.js";

const clock = manualClock();
const ids = sequentialIds();
const side = memorySide();
const simulators = createSimulators({ clock, ids, side });
/** Processor A's lookup fails while this is set. */
let aDown = false;
const processors = withReplacedCalls(simulators, (name, port) =>
  name !== "A"
    ? {}
    : {
        lookup: async (key) => {
          if (aDown) throw new Error("processor A's lookup answered 503");
          return port.lookup(key);
        },
      },
);
const engine = createEngine({ clock, ids, store: createMemoryStore(), processors, reconcileGraceMs: 8_000 });
afterAll(() => engine.close());
const lose = (what: "request" | null) => side.set("faults", "calls", what ? { lose: what, rate: 1 } : undefined);

describe("the reconciler, one call at a time", () => {
  it("a call whose lookup fails is reported and left open; the other processor's call is resolved in the same pass; the next pass resolves the first", async () => {
    const opened: Record<string, string> = {};
    for (const processor of ["A", "B"] as const) {
      const account = `acct_${processor}`;
      await engine.openAccount({ external_account_id: account, processor });
      const { payment_id } = (await engine.createIntent({ external_account_id: account, amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" })) as { payment_id: string };
      lose("request"); // the call never reaches the processor: its outcome unknown to the engine
      await expect(engine.authorize({ external_account_id: account, payment_id })).rejects.toMatchObject({ code: "processor_unavailable" });
      lose(null);
      opened[processor] = payment_id;
    }
    await clock.advance(9_000);
    aDown = true;
    const pass = await engine.reconcile();
    expect(pass.found).toBe(2);
    expect(pass.resolved.map((r) => [r.payment_id, r.appended])).toEqual([[opened.B, ["AttemptAbandoned"]]]);
    expect(pass.failed).toEqual([{ payment_id: opened.A, open: "AuthorizationAttempted", attempt_id: expect.any(String), error: "processor A's lookup answered 503" }]);
    expect(pass.waiting).toBe(0); // the failed one is past its grace, not among the younger ones
    expect((await engine.store.readStream(`payment-${opened.A}`)).at(-1)!.type).toBe("AuthorizationAttempted"); // still open

    aDown = false;
    const next = await engine.reconcile();
    expect(next.failed).toEqual([]);
    expect(next.resolved.map((r) => [r.payment_id, r.appended])).toEqual([[opened.A, ["AttemptAbandoned"]]]);
  });

  it("the second look at a call abandoned as never received, whose lookup fails, is tried again next pass: the late answer it finds is recorded", async () => {
    // two processes on one store: one whose refund dies after the processor refunded, one reconciling
    const shared = processesOnOneStore({ reconcileGraceMs: 8_000 });
    const dying = shared.newProcess((at, attempt) => {
      if (at === "after_call" && attempt.type === "RefundAttempted") throw new Error("killed after the processor refunded");
    });
    let down = false;
    const looking = withReplacedCalls(shared.simulators, (_, port) => ({ lookup: async (key) => (down ? Promise.reject(new Error("lookup answered 503")) : port.lookup(key)) }));
    const reconciling = createEngine({ clock: shared.clock, ids: randomIds(), store: shared.store, processors: looking, reconcileGraceMs: 8_000 });
    const account = "acct_late";
    await dying.openAccount({ external_account_id: account, processor: "A" });
    const { payment_id } = (await dying.createIntent({ external_account_id: account, amount: "10.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" })) as { payment_id: string };
    await dying.authorize({ external_account_id: account, payment_id });
    shared.side.set("faults", "calls", { latency_ms: 12_000 }); // the call reaches the processor 12 s late
    const refund = dying.refund({ external_account_id: account, payment_id, amount: "3.00" }).catch((error: Error) => error);
    await until(async () => (await shared.store.readStream(`payment-${payment_id}`)).some((e) => e.type === "RefundAttempted"));
    shared.side.set("faults", "calls", undefined);
    await shared.clock.advance(9_000);
    expect((await reconciling.reconcile()).resolved).toMatchObject([{ payment_id, processor: "never_received", appended: ["AttemptAbandoned"] }]);
    await shared.clock.advance(3_000); // it lands: the processor refunded, the command died before recording it
    expect(await refund).toMatchObject({ message: "killed after the processor refunded" });
    await shared.clock.advance(6_000); // a grace after the abandonment: its second look is due
    down = true;
    expect((await reconciling.reconcile()).failed).toMatchObject([{ payment_id, open: "RefundAttempted", error: "lookup answered 503" }]);
    down = false;
    expect((await reconciling.reconcile()).resolved).toMatchObject([{ payment_id, open: "RefundAttempted", processor: "refund", appended: ["PaymentRefunded"], late: true }]);
    expect((await reconciling.getPayment({ external_account_id: account, payment_id })).amount_refunded).toBe("3.00");
    await reconciling.close();
  });
});
