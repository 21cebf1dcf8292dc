// Two processes on one store (two engines sharing it): process A's reconciler finds a refund's
// call due (its request was lost), and while it asks the processor about it, process B's reconciler
// abandons that call and B's next refund opens a new one whose call is still on its way. Found by
// the chaos run (issue 29): A then resolved whatever call was open, asked about the new one, heard
// "never received" and abandoned it while the processor refunded (a charge without its record, and
// the refund acknowledged without effect). A resolves only the call that was due.
import { afterAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import { memorySide } from "../../src/processors/processor-side.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { withReplacedCalls } from "./replaced-calls.js";
import { createMemoryStore } from "../../src/store/memory/index.js";

const clock = manualClock();
const ids = sequentialIds();
const side = memorySide();
const simulators = createSimulators({ clock, ids, side });
const store = createMemoryStore();
/** Called when process A's reconciler asks the processor about a call (before it answers). */
let duringLookupOfA: (key: string) => Promise<void> = async () => undefined;
const processorsOfA = withReplacedCalls(simulators, (_, port) => ({
  lookup: async (key) => {
    await duringLookupOfA(key);
    return port.lookup(key);
  },
}));
const a = createEngine({ clock, ids, store, processors: processorsOfA, reconcileGraceMs: 8_000 });
const b = createEngine({ clock, ids, store, processors: simulators, reconcileGraceMs: 8_000 });
afterAll(async () => {
  await a.close();
  await b.close();
});
const lose = (what: "request" | null) => side.set("faults", "calls", what ? { lose: what, rate: 1 } : undefined);
const refunds = () => simulators.ledger.entries().filter(([, r]) => r.call === "refund");

describe("the reconciler of one process while another closes the due call and opens a new one", () => {
  it("resolves only the call that was due; the new call is left to its command", async () => {
    await a.openAccount({ external_account_id: "acct_r", processor: "B" });
    const created = await a.createIntent({ external_account_id: "acct_r", amount: "10.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_r" }, { idempotency_key: "create" });
    const payment_id = (created as { payment_id: string }).payment_id;
    await a.authorize({ external_account_id: "acct_r", payment_id }, { idempotency_key: "auth" });

    lose("request");
    await expect(a.refund({ external_account_id: "acct_r", payment_id, amount: "3.00" }, { idempotency_key: "refund-1" })).rejects.toMatchObject({ code: "processor_unavailable" });
    lose(null);
    await clock.advance(9_000); // the first refund's call is due

    let second: Promise<unknown> | undefined;
    duringLookupOfA = async () => {
      duringLookupOfA = async () => undefined;
      expect((await b.reconcile()).resolved.map((r) => r.appended)).toEqual([["AttemptAbandoned"]]);
      // B's next refund: its call is on its way (the processor answers only later)
      side.set("faults", "calls", { latency_ms: 60_000 });
      second = b.refund({ external_account_id: "acct_r", payment_id, amount: "2.00" }, { idempotency_key: "refund-2" });
      await new Promise((r) => setTimeout(r, 50));
      side.set("faults", "calls", undefined);
    };
    const pass = await a.reconcile();
    expect(pass.resolved.flatMap((r) => r.appended)).not.toContain("AttemptAbandoned");

    await clock.advance(60_000); // the processor answers the second refund
    expect(await second).toMatchObject({ amount_refunded: "2.00" });
    const events = await store.readStream(`payment-${payment_id}`);
    expect(events.map((e) => e.type).slice(-4)).toEqual(["RefundAttempted", "AttemptAbandoned", "RefundAttempted", "PaymentRefunded"]);
    expect(refunds()).toHaveLength(1);
  });
});
