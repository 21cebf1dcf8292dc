// The mapping from domain events to public events: read from how the payment record changed, so
// an event the merchant cannot see (one this mapping has never heard of included) makes none and
// leaves the per-payment sequence gapless; ids are derived from the domain events' ids.
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine.js";
import { serviceOpenApi } from "../../src/http/server.js";
import { createMemoryReadModels } from "../../src/store/memory/index.js";
import { createEventFeed } from "../../src/webhooks/feed.js";
import { publicEventId } from "../../src/present/public-events.js";

describe("public events", () => {
  it("ignore domain events without a public meaning, keep sequences gapless, take their ids from the domain events", async () => {
    const engine = createEngine();
    await engine.openAccount({ external_account_id: "acct_map" });
    const { payment_id } = await engine.createIntent({ external_account_id: "acct_map", amount: "3.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
    await engine.authorize({ external_account_id: "acct_map", payment_id });
    // an internal marker another part of the system might append (the machine does not know it)
    const stream = `payment-${payment_id}`;
    await engine.store.append(stream, [{ id: "00000000-0000-4000-8000-0000000000aa", type: "CaptureAttemptStarted", version: 1, data: {}, metadata: { timestamp: "2026-01-01T00:00:00.000+00:00", request_id: 1 } }], { expectedRevision: "any" });
    const feed = createEventFeed({ store: engine.store, readModels: engine.readModels });
    const { data } = await feed.page("acct_map", { payment_id });
    expect(data.map((e) => [e.type, e.sequence])).toEqual([["payment_intent.created", 1], ["payment_intent.requires_capture", 2]]);
    const domain = await engine.store.readStream(stream);
    // created; then AuthorizationAttempted (no public meaning) and PaymentAuthorized
    expect(domain.slice(0, 3).map((e) => e.type)).toEqual(["PaymentIntentCreated", "AuthorizationAttempted", "PaymentAuthorized"]);
    expect(data.map((e) => e.id)).toEqual([domain[0]!, domain[2]!].map((e) => publicEventId(e.id)));
    // rebuilt from zero elsewhere: the same events, ids and sequences
    const again = createEventFeed({ store: engine.store, readModels: createMemoryReadModels() });
    expect((await again.page("acct_map", { payment_id })).data).toEqual(data);
  });

  it("the OpenAPI document lists the feed and the endpoint operations", () => {
    const paths = (serviceOpenApi() as { paths: Record<string, object> }).paths;
    const operations = Object.entries(paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    for (const op of ["GET /v2/events", "POST /v2/webhook_endpoints", "GET /v2/webhook_endpoints", "DELETE /v2/webhook_endpoints/{endpoint_id}"]) expect(operations).toContain(op);
  });
});
