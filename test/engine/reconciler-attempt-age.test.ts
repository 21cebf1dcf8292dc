// An attempt's age, by which the reconciler decides that its call is due, counts from when the
// attempt was opened, not from when its request arrived. Found by CI's chaos run (SQLite, seed 29):
// refunds of one payment queued behind each other while the processor answered seconds late; a
// refund that had waited its turn longer than the grace opened its attempt stamped with its arrival,
// another process's reconciler found it "due" at once, heard "never received" while the call was on
// its way, and abandoned it: the processor refunded, the payment never said so.
import { describe, expect, it } from "vitest";
import { processesOnOneStore } from "./processes-on-one-store.js";

// two processes on one store: `engine` serves the refunds, `other` reconciles (in one process the
// reconciler would wait for the payment's lock, held through the call)
const { clock, side, simulators, store, newProcess } = processesOnOneStore({ reconcileGraceMs: 8_000 });
const engine = newProcess();
const other = newProcess();

const refunds = () => simulators.ledger.entries().filter(([, r]) => r.call === "refund");
const attempts = async (paymentId: string) => (await store.readStream(`payment-${paymentId}`)).filter((e) => e.type === "RefundAttempted");
async function until(done: () => Promise<boolean>) {
  for (let i = 0; i < 200 && !(await done()); i++) await new Promise((r) => setTimeout(r, 5));
  expect(await done()).toBe(true);
}

describe("a command that waited for its payment's lock longer than the grace", () => {
  it("opens its attempt stamped when opened: another process's reconciler leaves its call in flight alone", { timeout: 10_000 }, async () => {
    await engine.openAccount({ external_account_id: "acct_age", processor: "B" });
    const created = await engine.createIntent({ external_account_id: "acct_age", amount: "10.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_age" });
    const payment_id = (created as { payment_id: string }).payment_id;
    await engine.authorize({ external_account_id: "acct_age", payment_id });

    side.set("faults", "calls", { latency_ms: 6_000 }); // the processor answers 6 s late
    const first = engine.refund({ external_account_id: "acct_age", payment_id, amount: "1.00" }, { idempotency_key: "refund-1" });
    await until(async () => (await attempts(payment_id)).length === 1);
    const second = engine.refund({ external_account_id: "acct_age", payment_id, amount: "2.00" }, { idempotency_key: "refund-2" });
    await clock.advance(6_000); // the first answers; the second, waiting since its arrival, opens its attempt
    await until(async () => (await attempts(payment_id)).length === 2);
    side.set("faults", "calls", undefined);

    await clock.advance(3_000); // 9 s after the second arrived, 3 s after it opened its attempt
    const pass = await other.reconcile();
    expect(pass.resolved).toEqual([]);
    expect(pass.waiting).toBe(1);

    await clock.advance(3_000); // its call lands
    await expect(first).resolves.toMatchObject({ amount_refunded: "1.00" });
    await expect(second).resolves.toMatchObject({ amount_refunded: "3.00" });
    const [, opened] = await attempts(payment_id);
    expect(Date.parse(opened!.metadata.timestamp)).toBe(Date.parse("2026-01-01T00:00:00.000Z") + 6_000);
    expect(refunds().map(([, r]) => r.amount)).toEqual(["1.00", "2.00"]);
  });
});
