// A processor that does not answer a call which moves no money and is recorded nowhere (a card on
// file looked up at create, a card read by processor B's client SDK): 503 processor_unavailable
// with Retry-After, nothing appended, and the same request succeeds once the processor answers.
// They had been 500 internal_error (an adapter's connection error, README "Running in production").
// And a call that may have moved money (a charge) is retried after the reconciler's grace.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type Api, type Merchant } from "./harness.js";

let api: Api;
let b: Merchant;
let down = false;
beforeAll(async () => {
  api = await startApi({ reconcileGraceMs: 3_000 });
  const unreachable = () => Promise.reject(new Error("connect ECONNREFUSED 10.0.0.7:443"));
  for (const name of ["A", "B"] as const) {
    const port = api.simulators.get(name);
    const { retrieveStoredCard, readCardFromClient, chargeStoredCard } = port;
    port.chargeStoredCard = (req) => (down ? unreachable() : chargeStoredCard(req));
    port.retrieveStoredCard = (req) => (down ? unreachable() : retrieveStoredCard(req));
    port.readCardFromClient = (req) => (down ? unreachable() : readCardFromClient(req));
  }
  b = await api.merchant("acct_b", "B");
});
afterAll(() => api.close());

/** The answer while the processor does not answer. */
async function whileDown<T>(call: () => Promise<T>): Promise<T> {
  down = true;
  try {
    return await call();
  } finally {
    down = false;
  }
}
const events = async () => (await api.engine.store.readAll()).length;
const storedCard = { amount: "12.50", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c1" };

describe("a processor that does not answer a call that records nothing", () => {
  it("a stored-card create (the card looked up) is 503 processor_unavailable, appends nothing, and goes through once it answers", async () => {
    const before = await events();
    const refused = await whileDown(() => b.post("/v2/payment/intent", storedCard));
    expect(refused.status, JSON.stringify(refused.body)).toBe(503);
    expect(refused.body).toMatchObject({ code: "processor_unavailable" });
    expect(refused.body.detail).toContain("processor B did not answer retrieveStoredCard (connect ECONNREFUSED 10.0.0.7:443); nothing was recorded: retry");
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(await events()).toBe(before);
    expect((await b.post("/v2/payment/intent", storedCard)).status).toBe(200);
  });

  it("a charge whose answer is not known (it may have moved money) is retried after the reconciler's grace: Retry-After 3 with a grace of 3 s", async () => {
    const created = await b.post("/v2/payment/intent", { ...storedCard, amount: "9.00" });
    const unknown = await whileDown(() => b.post("/v2/payment/auth", { payment_id: created.body.payment_id }));
    expect(unknown.status, JSON.stringify(unknown.body)).toBe(503);
    expect(unknown.body.detail).toContain("is not known (connect ECONNREFUSED 10.0.0.7:443)");
    expect(unknown.headers.get("retry-after")).toBe("3");
  });

  it("a card read by the client SDK is 503 processor_unavailable, appends nothing, and is read once it answers", async () => {
    const created = await b.post("/v2/payment/intent", { amount: "8.00", payment_method_types: "card", capture_method: "manual" });
    const collect = { client_secret: created.body.client_secret, card_number: "4242424242424242" };
    const before = await events();
    const refused = await whileDown(() => api.request("POST", "/v2/sdk/payment-method", { body: collect }));
    expect(refused.status, JSON.stringify(refused.body)).toBe(503);
    expect(refused.body).toMatchObject({ code: "processor_unavailable" });
    expect(refused.body.detail).toContain("processor B did not answer readCardFromClient");
    expect(await events()).toBe(before);
    const read = await api.request("POST", "/v2/sdk/payment-method", { body: collect });
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body.status).toBe("requires_capture");
  });
});
