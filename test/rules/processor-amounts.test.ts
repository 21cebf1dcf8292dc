// Rule (DESIGN: every processor call is bracketed by events): the processor is asked to move
// exactly the amount cardflow records for the call: the attempt's amount and its outcome's. A
// partial capture or refund that sent the processor another amount than it records would leave
// cardflow's ledger and the processor's apart without any status telling.
import { describe, expect, test } from "vitest";
import { createEngine } from "../../src/engine.js";
import { manualClock } from "../../src/clock.js";
import { sequentialIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { amountMismatches } from "../support/processor-amounts.js";
import { ACCOUNT, givenAnEngine } from "./given.js";

/** The amounts the processor was asked for on one payment, by call, in order. */
async function asked(engine: { store: { readStream(s: string): Promise<{ type: string; data: unknown }[]> } }, ledger: { get(k: string): { call: string; amount?: string } | undefined }, paymentId: string) {
  const out: string[] = [];
  for (const e of await engine.store.readStream(`payment-${paymentId}`)) {
    if (!e.type.endsWith("Attempted")) continue;
    const entry = ledger.get((e.data as { attempt_id: string }).attempt_id);
    if (entry && entry.call !== "refused") out.push(`${entry.call} ${entry.amount ?? "-"}`);
  }
  return out;
}

describe("Rule: the processor is asked for the amount cardflow records", () => {
  test("given 10.00 authorized, when 6.00 is captured, 2.50 refunded and then the rest, then the processor was asked for 10.00, 6.00, 2.50 and 3.50, as recorded", async () => {
    const { engine, processors, authorized } = await givenAnEngine();
    const payment_id = await authorized("10.00");
    await engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "6.00" });
    await engine.refund({ external_account_id: ACCOUNT, payment_id, amount: "2.50" });
    await engine.refund({ external_account_id: ACCOUNT, payment_id });

    expect(await asked(engine, processors.ledger, payment_id)).toEqual(["authorize 10.00", "capture 6.00", "refund 2.50", "refund 3.50"]);
    expect(await amountMismatches(engine.store, processors.ledger, payment_id)).toEqual([]);
  });

  test("given the simulators, when a payment is partially captured and refunded, then their ledger holds the recorded amounts", async () => {
    const clock = manualClock();
    const sims = createSimulators({ clock, ids: sequentialIds(500) });
    const engine = createEngine({ clock, ids: sequentialIds(), processors: sims });
    await engine.openAccount({ external_account_id: ACCOUNT, processor: "B", currency: "JPY" });
    const { payment_id } = await engine.createIntent({ external_account_id: ACCOUNT, amount: "1200", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
    await engine.authorize({ external_account_id: ACCOUNT, payment_id });
    await engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "700" });
    await engine.refund({ external_account_id: ACCOUNT, payment_id, amount: "300" });

    expect(await asked(engine, sims.ledger, payment_id)).toEqual(["authorize 1200", "capture 700", "refund 300"]);
    expect(await amountMismatches(engine.store, sims.ledger, payment_id)).toEqual([]);
  });

  test("the check fails when the processor was asked for another amount than recorded", async () => {
    // the measure itself: a ledger entry whose amount differs from the stream's is named
    const { engine, processors, authorized } = await givenAnEngine();
    const payment_id = await authorized("10.00");
    await engine.capture({ external_account_id: ACCOUNT, payment_id, amount: "6.00" });
    const [key, entry] = [...processors.ledger].find(([, e]) => e.call === "capture")!;
    processors.ledger.set(key, { ...entry, amount: "10.00" });
    expect(await amountMismatches(engine.store, processors.ledger, payment_id)).toEqual([
      `${key}: CaptureAttempted records 6.00, the processor was asked for 10.00`,
      `${key}: PaymentCaptured records 6.00, the processor was asked for 10.00`,
    ]);
  });
});
