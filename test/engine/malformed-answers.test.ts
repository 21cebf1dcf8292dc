// An adapter that answers outside the port's types (an outcome kind it does not have, an amount
// that is not one): the engine checks every answer before it becomes an event, so a malformed one
// is an unknown outcome (503 processor_unavailable, the attempt left open for the reconciler),
// never a 500 nor an approval; a malformed lookup is recorded nowhere (the attempt stays open).
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { InvalidRequest, ProcessorUnavailable } from "../../src/errors.js";
import { randomIds } from "../../src/ids.js";
import type { ProcessorPort, Processors } from "../../src/processors/port.js";
import { createSimulators } from "../../src/processors/simulator.js";

/** The simulators, with processor B's calls replaced by `override`. */
function processorsWith(override: Partial<Record<keyof ProcessorPort, (...args: never[]) => Promise<unknown>>>): Processors {
  const sims = createSimulators({ clock: systemClock, ids: randomIds() });
  return {
    connect: (report) => sims.connect(report),
    get: (processor) => (processor === "B" ? ({ ...sims.get(processor), ...override } as ProcessorPort) : sims.get(processor)),
  };
}

const authorization = {
  amount_authorized: "lots",
  tip_amount: "0.00",
  donation_amount: "0.00",
  authorization_code: "123456",
  card: { type: "card_not_present", brand: "visa", last_4: "4242", exp_month: "12", exp_year: 2030, cardholder_name: null, funding: "credit" },
  avs_response_code: null,
  avs_response_message: null,
};

async function charged(processors: Processors) {
  const engine = createEngine({ processors });
  await engine.openAccount({ external_account_id: "acct_b", processor: "B" });
  const { payment_id } = await engine.createIntent({ external_account_id: "acct_b", amount: "77.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
  const error = await engine.authorize({ external_account_id: "acct_b", payment_id }).then(() => undefined, (e: unknown) => e);
  const types = async () => (await engine.store.readStream(`payment-${payment_id}`)).map((e) => e.type);
  return { engine, payment_id, error, types };
}

describe("an adapter's malformed answer", () => {
  for (const [what, answer, wrong] of [
    ["an outcome kind the port does not have", { kind: "approved" }, /kind/],
    ["an authorization whose amount is not one", { kind: "authorized", authorization }, /authorization\.amount_authorized/],
  ] as const) {
    it(`chargeStoredCard answering ${what}: 503 processor_unavailable, the attempt left open`, async () => {
      const { error, types } = await charged(processorsWith({ chargeStoredCard: async () => answer }));
      expect(error).toBeInstanceOf(ProcessorUnavailable);
      expect(error).toMatchObject({ status: 503, code: "processor_unavailable" });
      expect((error as Error).message).toContain("processor B answered chargeStoredCard with a malformed answer");
      expect((error as Error).message).toMatch(wrong);
      expect((await types()).at(-1)).toBe("AuthorizationAttempted");
    });
  }

  it("a lookup answering a malformed recorded outcome: nothing recorded, the attempt stays open, the error named", async () => {
    const { engine, error, types } = await charged(
      processorsWith({
        chargeStoredCard: async () => Promise.reject(new Error("connection reset: the answer was lost")),
        lookup: async () => ({ call: "authorize", outcome: { kind: "authorized", authorization } }),
      }),
    );
    expect(error).toMatchObject({ status: 503, code: "processor_unavailable" });
    const pass = await engine.reconcile({ graceMs: 0 }).then((report) => JSON.stringify(report), (e: unknown) => (e instanceof Error ? e.message : String(e)));
    expect(pass).toContain("processor B answered lookup(att_");
    expect(pass).toContain("outcome.authorization.amount_authorized");
    expect(pass).not.toContain("is not iterable");
    expect((await types()).at(-1)).toBe("AuthorizationAttempted");
  });

  it("a report outside the port's types is refused (400), nothing recorded", async () => {
    const { engine, payment_id, types } = await charged(processorsWith({ chargeStoredCard: async () => Promise.reject(new Error("timeout")) }));
    const before = await types();
    const refused = await engine.report(payment_id, { kind: "approved" } as never).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidRequest);
    expect((refused as Error).message).toContain(`processor report for payment ${payment_id} is malformed`);
    expect(await types()).toEqual(before);
  });
});
