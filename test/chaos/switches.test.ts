// The chaos run's sandbox-only switches: injected processor faults (src/processors/sandbox-faults.ts)
// and seeded defects (src/seeded-defects.ts), each inert outside the sandbox.
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { randomIds } from "../../src/ids.js";
import { memorySide } from "../../src/processors/processor-side.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { withSeededDefect } from "../../src/seeded-defects.js";
import { createMemoryStore } from "../../src/store/memory/index.js";
import { WrongExpectedRevision } from "../../src/store/port.js";

async function charge(scripted: boolean, fault: object) {
  const side = memorySide();
  side.set("faults", "calls", fault);
  const sims = createSimulators({ clock: systemClock, ids: randomIds(), side, scripted });
  const engine = createEngine({ processors: sims });
  await engine.openAccount({ external_account_id: "acct", processor: "A" });
  const intent = await engine.createIntent({ external_account_id: "acct", amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus" });
  const answer = await engine.authorize({ external_account_id: "acct", payment_id: intent.payment_id }).then((r) => r.status, (e: Error) => e.message);
  return { answer, ledger: sims.ledger.entries().map(([, r]) => r.call), attempt: (await engine.getPayment({ external_account_id: "acct", payment_id: intent.payment_id })).status };
}

describe("injected processor faults (sandbox only)", () => {
  it("a lost answer: the processor acted (its ledger has the call), cardflow does not know the outcome", async () => {
    expect(await charge(true, { lose: "answer", rate: 1 })).toMatchObject({ answer: expect.stringMatching(/answer to .* was lost/), ledger: ["authorize"] });
  });
  it("a lost request: the processor never acted", async () => {
    expect(await charge(true, { lose: "request", rate: 1 })).toMatchObject({ answer: expect.stringMatching(/lost before it arrived/), ledger: [] });
  });
  it("a rate of 0 loses nothing; outside the sandbox no fault is read", async () => {
    expect(await charge(true, { lose: "request", rate: 0 })).toMatchObject({ answer: "requires_capture", ledger: ["authorize"] });
    expect(await charge(false, { lose: "request", rate: 1, latency_ms: 60_000 })).toMatchObject({ answer: "requires_capture" });
  });
});

describe("seeded defects (sandbox only)", () => {
  const event = (id: string) => ({ id, type: "X", version: 1, data: {}, metadata: { timestamp: "2025-01-01T00:00:00Z", request_id: 1 } });
  it("skip-expected-revision lets a stale append through; production ignores the switch; an unknown name is refused", async () => {
    const env = { CARDFLOW_SEEDED_DEFECT: "skip-expected-revision" };
    const defective = withSeededDefect({ store: createMemoryStore() }, { sandbox: true }, env).store;
    await defective.append("payment-p", [event("a")], { expectedRevision: "no_stream" });
    await expect(defective.append("payment-p", [event("b")], { expectedRevision: "no_stream" })).resolves.toMatchObject({ nextRevision: 1 });
    const production = withSeededDefect({ store: createMemoryStore() }, { sandbox: false }, env).store;
    await production.append("payment-p", [event("a")], { expectedRevision: "no_stream" });
    await expect(production.append("payment-p", [event("b")], { expectedRevision: "no_stream" })).rejects.toBeInstanceOf(WrongExpectedRevision);
    expect(() => withSeededDefect({ store: createMemoryStore() }, { sandbox: true }, { CARDFLOW_SEEDED_DEFECT: "nope" })).toThrow(/expected one of/);
  });
});
