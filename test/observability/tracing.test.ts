// Spans with an OpenTelemetry SDK registered in this process (an in-memory exporter): a confirm
// (a stored-card auth) over real HTTP gives the tree request > command > store append (attempt),
// processor call, store append (outcome), and a list read its read-model catch-up, with the payment id, the
// command and the outcomes as attributes, continuing the caller's W3C traceparent; no attribute
// holds a card number, a key or a secret. Without an SDK the same calls record nothing.
import { context, propagation, trace } from "@opentelemetry/api";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import type { FastifyInstance } from "fastify";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { manualClock } from "../../src/clock.js";
import { createServer } from "../../src/http/server.js";
import { sequentialIds } from "../../src/ids.js";
import { createObservedEngine } from "../../src/observability/index.js";
import { createSimulators } from "../../src/processors/simulator.js";
import { paymentsProjection } from "../../projections/payments.js";

const exporter = new InMemorySpanExporter();
let sdk: NodeSDK;
let app: FastifyInstance | undefined;

beforeAll(() => {
  sdk = new NodeSDK({ spanProcessors: [new SimpleSpanProcessor(exporter)], instrumentations: [], metricReaders: [], logRecordProcessors: [], autoDetectResources: false });
  sdk.start();
});
afterEach(async () => {
  await app?.close();
  app = undefined;
  exporter.reset();
});
afterAll(async () => {
  await sdk.shutdown();
  // the API's globals outlive this file in the worker: back to no-ops
  trace.disable();
  context.disable();
  propagation.disable();
});

async function serve() {
  const clock = manualClock();
  const ids = sequentialIds();
  const simulators = createSimulators({ clock, ids });
  const { engine, metrics, notes } = createObservedEngine({ clock, ids, processors: simulators });
  await engine.openAccount({ external_account_id: "acct_t", processor: "A", currency: "USD" });
  await engine.openAccount({ external_account_id: "acct_b", processor: "B", currency: "USD" });
  const { key } = await createApiKeys(engine).issue("acct_t");
  const { key: keyB } = await createApiKeys(engine).issue("acct_b");
  app = createServer({ engine, simulators, metrics, notes });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const post = async (path: string, body: object, headers: Record<string, string> = {}, as = { key, account: "acct_t" }) => {
    const res = await fetch(base + path, { method: "POST", headers: { authorization: `Bearer ${as.key}`, "content-type": "application/json", ...headers }, body: JSON.stringify({ external_account_id: as.account, ...body }) });
    return { status: res.status, body: await res.json() };
  };
  return { key, post, base, accountB: { key: keyB, account: "acct_b" } };
}

const byName = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe("traces", () => {
  it("a confirm's span tree: request > command > append, processor call, append; the caller's traceparent continued; a list's catch-up", async () => {
    const { key, post, base } = await serve();
    const created = await post("/v2/payment/intent", { amount: "12.50", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
    expect(created.status).toBe(200);
    exporter.reset();

    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpan = "00f067aa0ba902b7";
    const confirmed = await post("/v2/payment/auth", { payment_id: created.body.payment_id }, { traceparent: `00-${traceId}-${callerSpan}-01` });
    expect(confirmed.body.status).toBe("requires_capture");
    const spans = exporter.getFinishedSpans();

    const [request] = byName(spans, "POST /v2/payment/auth");
    expect(request, spans.map((s) => s.name).join(", ")).toBeDefined();
    expect(request!.spanContext().traceId).toBe(traceId);
    expect(parentOf(request!)).toBe(callerSpan);
    expect(request!.attributes).toMatchObject({ "http.request.method": "POST", "http.route": "/v2/payment/auth", "http.response.status_code": 200, "cardflow.payment_id": created.body.payment_id });

    const [command] = byName(spans, "cardflow.command.authorize");
    expect(parentOf(command!)).toBe(request!.spanContext().spanId);
    expect(command!.attributes).toMatchObject({ "cardflow.command": "authorize", "cardflow.payment_id": created.body.payment_id, "cardflow.outcome": "ok" });

    const under = (parent: ReadableSpan) => spans.filter((s) => parentOf(s) === parent.spanContext().spanId).sort((a, b) => Number(a.startTime[0] - b.startTime[0]) || a.startTime[1] - b.startTime[1]);
    const steps = under(command!);
    expect(steps.map((s) => s.name)).toEqual(["cardflow.store.append", "cardflow.processor.chargeStoredCard", "cardflow.store.append"]);
    const [attempt, call, outcome] = steps;
    expect(attempt!.attributes).toMatchObject({ "cardflow.stream": `payment-${created.body.payment_id}`, "cardflow.event_types": ["AuthorizationAttempted"], "cardflow.outcome": "ok" });
    expect(call!.attributes).toMatchObject({ "cardflow.processor": "A", "cardflow.processor.call": "chargeStoredCard", "cardflow.payment_id": created.body.payment_id, "cardflow.outcome": "authorized" });
    expect(outcome!.attributes).toMatchObject({ "cardflow.event_types": ["PaymentAuthorized"] });
    for (const s of steps) expect(s.spanContext().traceId).toBe(traceId);

    // a read that waits on the read models: their catch-up is traced under it
    const listed = await fetch(`${base}/v2/payments?external_account_id=acct_t`, { headers: { authorization: `Bearer ${key}` } });
    expect(listed.status).toBe(200);
    const all = exporter.getFinishedSpans();
    const [list] = byName(all, "GET /v2/payments");
    const catchUps = all.filter((s) => s.name === "cardflow.read_models.catch_up" && parentOf(s) === list!.spanContext().spanId);
    expect(catchUps.length).toBeGreaterThan(0);
    expect(catchUps[0]!.attributes["cardflow.projections"]).toContain(paymentsProjection.name);

    // what every span says, written out: no key, no card number
    const written = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes })));
    expect(written).not.toContain(key);
    expect(written).not.toContain("4242");
  });

  it("a refused command: its span and the request's say the error, with the code as outcome", async () => {
    const { post } = await serve();
    const created = await post("/v2/payment/intent", { amount: "5.00", payment_method_types: "card_present", capture_method: "manual" });
    exporter.reset();
    const refused = await post("/v2/payment/capture", { payment_id: created.body.payment_id, amount: "5.00" });
    expect(refused.status).toBe(409);
    const spans = exporter.getFinishedSpans();
    const [command] = byName(spans, "cardflow.command.capture");
    expect(command!.attributes["cardflow.outcome"]).toBe("payment_intent_unexpected_state");
    expect(command!.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(byName(spans, "POST /v2/payment/capture")[0]!.attributes["http.response.status_code"]).toBe(409);
  });

  it("a card read from the client SDK: its card number is in no span", async () => {
    const { post, base, accountB } = await serve();
    const created = await post("/v2/payment/intent", { amount: "7.00", payment_method_types: "card", capture_method: "manual" }, {}, accountB);
    exporter.reset();
    const secret = created.body.client_secret as string;
    expect(secret).toBeTruthy();
    const collected = await fetch(`${base}/v2/sdk/payment-method`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_secret: secret, card_number: "5555555555554444" }),
    });
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(0);
    const written = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, status: s.status })));
    expect(written).not.toContain("5555555555554444");
    expect(written).not.toContain("4444");
    expect(written).not.toContain(secret);
    expect(collected.status).toBe(200);
    expect(byName(spans, "cardflow.processor.readCardFromClient")).toHaveLength(1);
  });
});
