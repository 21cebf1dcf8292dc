// A processor that does not answer a call which moves no money and is recorded nowhere (a card on
// file looked up at create, a card read by processor B's client SDK): 503 processor_unavailable
// with Retry-After, nothing appended, and the same request succeeds once the processor answers.
// They had been 500 internal_error (an adapter's connection error, README "Running in production").
// And a call that may have moved money (a charge) is retried after the reconciler's grace.
import { afterAll, describe, expect, it } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { manualClock } from "../../src/clock.js";
import { createEngine } from "../../src/engine.js";
import { createServer } from "../../src/http/server.js";
import { sequentialIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";

const clock = manualClock();
const ids = sequentialIds();
const simulators = createSimulators({ clock, ids });
let down = false;
const unreachable = () => Promise.reject(new Error("connect ECONNREFUSED 10.0.0.7:443"));
for (const name of ["A", "B"] as const) {
  const port = simulators.get(name);
  const { retrieveStoredCard, readCardFromClient, chargeStoredCard } = port;
  port.chargeStoredCard = (req) => (down ? unreachable() : chargeStoredCard(req));
  port.retrieveStoredCard = (req) => (down ? unreachable() : retrieveStoredCard(req));
  port.readCardFromClient = (req) => (down ? unreachable() : readCardFromClient(req));
}
const engine = createEngine({ clock, ids, processors: simulators, reconcileGraceMs: 3_000 });
const apiKeys = createApiKeys(engine);
const app = createServer({ engine, apiKeys, simulators, logger: false });
await app.listen({ port: 0, host: "127.0.0.1" });
afterAll(async () => {
  await app.close();
  await engine.close();
});
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
await engine.openAccount({ external_account_id: "acct_b", processor: "B" });
const { key } = await apiKeys.issue("acct_b", "test");

async function post(path: string, body: object, auth = true) {
  const res = await fetch(base + path, { method: "POST", headers: { ...(auth ? { authorization: `Bearer ${key}` } : {}), "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as any };
}
const events = async () => (await engine.store.readAll()).length;

describe("a processor that does not answer a call that records nothing", () => {
  it("a stored-card create (the card looked up) is 503 processor_unavailable, appends nothing, and goes through once it answers", async () => {
    const intent = { external_account_id: "acct_b", amount: "12.50", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c1" };
    const before = await events();
    down = true;
    const refused = await post("/v2/payment/intent", intent);
    down = false;
    expect(refused.status, JSON.stringify(refused.body)).toBe(503);
    expect(refused.body).toMatchObject({ code: "processor_unavailable" });
    expect(refused.body.detail).toContain("processor B did not answer retrieveStoredCard (connect ECONNREFUSED 10.0.0.7:443); nothing was recorded: retry");
    expect(refused.retryAfter).toBe("5");
    expect(await events()).toBe(before);
    expect((await post("/v2/payment/intent", intent)).status).toBe(200);
  });

  it("a charge whose answer is not known (it may have moved money) is retried after the reconciler's grace: Retry-After 3 with a grace of 3 s", async () => {
    const created = await post("/v2/payment/intent", { external_account_id: "acct_b", amount: "9.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "c1" });
    down = true;
    const unknown = await post("/v2/payment/auth", { external_account_id: "acct_b", payment_id: created.body.payment_id });
    down = false;
    expect(unknown.status, JSON.stringify(unknown.body)).toBe(503);
    expect(unknown.body.detail).toContain("is not known (connect ECONNREFUSED 10.0.0.7:443)");
    expect(unknown.retryAfter).toBe("3");
  });

  it("a card read by the client SDK is 503 processor_unavailable, appends nothing, and is read once it answers", async () => {
    const created = await post("/v2/payment/intent", { external_account_id: "acct_b", amount: "8.00", payment_method_types: "card", capture_method: "manual" });
    const before = await events();
    down = true;
    const refused = await post("/v2/sdk/payment-method", { client_secret: created.body.client_secret, card_number: "4242424242424242" }, false);
    down = false;
    expect(refused.status, JSON.stringify(refused.body)).toBe(503);
    expect(refused.body).toMatchObject({ code: "processor_unavailable" });
    expect(refused.body.detail).toContain("processor B did not answer readCardFromClient");
    expect(await events()).toBe(before);
    const read = await post("/v2/sdk/payment-method", { client_secret: created.body.client_secret, card_number: "4242424242424242" }, false);
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body.status).toBe("requires_capture");
  });
});
