// The reconciler resolves each open call on its own: one whose processor's lookup fails (a
// processor down, an adapter answering what no outcome is) is reported as not resolved and left
// open for the next pass, and every other call is resolved in the same pass. One failing lookup
// used to end the pass, every pass: no call of any processor was resolved until it answered.
import { afterAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { sequentialIds } from "../../src/ids.js";
import { memorySide } from "../../src/processors/processor-side.js";
import type { Processors } from "../../src/processors/port.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { createMemoryStore } from "../../src/store/memory/index.js";

const clock = manualClock();
const ids = sequentialIds();
const side = memorySide();
const simulators = createSimulators({ clock, ids, side });
/** Processor A's lookup fails while this is set. */
let aDown = false;
const processors: Processors = {
  connect: (report) => simulators.connect(report),
  get(name) {
    const port = simulators.get(name);
    if (name !== "A") return port;
    return new Proxy(port, {
      get: (target, prop, receiver) =>
        prop === "lookup"
          ? async (key: string) => {
              if (aDown) throw new Error("processor A's lookup answered 503");
              return target.lookup(key);
            }
          : Reflect.get(target, prop, receiver),
    });
  },
};
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
    expect((await engine.store.readStream(`payment-${opened.A}`)).at(-1)!.type).toBe("AuthorizationAttempted"); // still open

    aDown = false;
    const next = await engine.reconcile();
    expect(next.failed).toEqual([]);
    expect(next.resolved.map((r) => [r.payment_id, r.appended])).toEqual([[opened.A, ["AttemptAbandoned"]]]);
  });
});
