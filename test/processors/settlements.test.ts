// A requested capture is settled by the processor later, on its own: the simulators keep the
// settlement on their side until cardflow has taken it, so it is not lost when the store cannot
// take it at that moment (an outage: made again) or when the process that asked for the capture
// is gone (a process that starts on the same side makes it).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import { fileSide, processorSideIn } from "../../src/processors/processor-side.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import { StoreUnavailable, type EventStore } from "../../src/store/port.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-settlements-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const A = "acct_settle";
const charge = { external_account_id: A, amount: "99.13", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" } as const;

describe("a requested capture's settlement", () => {
  it("is made again after an outage refused it", async () => {
    const clock = manualClock();
    const ids = sequentialIds();
    const memory = createMemoryStore();
    let outage = false;
    const store: EventStore = { ...memory, append: (...args) => (outage ? Promise.reject(new StoreUnavailable("test outage")) : memory.append(...args)) };
    const engine = createEngine({ store, clock, ids, processors: createSimulators({ clock, ids, captureSettleMs: 1_000 }) });
    await engine.openAccount({ external_account_id: A, processor: "A" });
    const { payment_id } = await engine.createIntent(charge);
    expect((await engine.authorize({ external_account_id: A, payment_id })).status).toBe("capture_requested");
    outage = true;
    await clock.advance(1_000); // the settlement arrives while the store is down
    outage = false;
    expect((await engine.getPayment({ external_account_id: A, payment_id })).status).toBe("capture_requested");
    await clock.advance(1_000);
    expect(await engine.getPayment({ external_account_id: A, payment_id })).toMatchObject({ status: "succeeded", amount_captured: "99.13" });
    await engine.close();
  });

  it("is made by a process that starts after the one that asked for the capture is gone", async () => {
    const side = processorSideIn(dir);
    const clock = manualClock();
    const ids = sequentialIds();
    const store = createMemoryStore();
    const first = createEngine({ store, clock, ids, processors: createSimulators({ clock, ids, captureSettleMs: 1_000, side: fileSide(side) }) });
    await first.openAccount({ external_account_id: A, processor: "A" });
    const { payment_id } = await first.createIntent(charge);
    expect((await first.authorize({ external_account_id: A, payment_id })).status).toBe("capture_requested");
    // the first process ends before its settlement timer fires (its clock never gets there)
    const laterClock = manualClock(clock.now() + 5_000);
    const second = createEngine({ store, clock: laterClock, ids, processors: createSimulators({ clock: laterClock, ids, captureSettleMs: 1_000, side: fileSide(side) }) });
    await laterClock.advance(0);
    expect(await second.getPayment({ external_account_id: A, payment_id })).toMatchObject({ status: "succeeded", amount_captured: "99.13" });
    expect(fileSide(side).entries("settlements")).toEqual([]);
  });
});
