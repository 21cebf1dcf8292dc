// Delivery against a real HTTP receiver that fails for a while: retries back off (exponentially,
// with jitter, on injected short delays so the test is fast), a payment's events wait for the one
// before to be acknowledged and arrive in order once the receiver recovers, a failing payment does
// not hold back the others, a silent receiver times out, and past the horizon the endpoint is
// marked failing while its events stay in the feed.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import { createMemoryReadModels, createMemoryStore } from "../../src/store/memory/index.js";
import type { EventStore, ReadModelStore } from "../../src/store/port.js";
import { openDurable } from "../store/processes/stores.js";
import { testDatabase } from "../support/postgres.js";
import { createWebhooks } from "../../src/index.js";
import type { Backoff } from "../../src/webhooks/delivery.js";
import { createOutbound } from "../../src/outbound/client.js";
import { postWith } from "../../src/webhooks/transport.js";
import { deliveryRecords } from "../../src/webhooks/delivery-records.js";
import { startReceiver, until, type Received } from "./receiver.js";

const ACCOUNT = "acct_hooks";
/** The sandbox with WEBHOOK_ALLOW_PRIVATE=1: receivers on loopback. */
const LOCAL = createOutbound({ sandbox: true, allowPrivate: true, allowlist: [] });
const PRODUCTION = createOutbound({ sandbox: false, allowPrivate: false, allowlist: [] });
const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

const dir = mkdtempSync(join(tmpdir(), "cardflow-delivery-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const database = await testDatabase();
// the delivery state lives in the read-model store: every store keeps it
const STORES: Record<string, () => Promise<{ events: EventStore; readModels: ReadModelStore }>> = {
  memory: async () => ({ events: createMemoryStore(), readModels: createMemoryReadModels() }),
  sqlite: () => openDurable({ kind: "sqlite", path: join(dir, `${randomUUID()}.db`) }),
  postgres: () => openDurable({ kind: "postgres", url: database, schema: `t_${randomUUID().replaceAll("-", "").slice(0, 12)}` }),
};
let storeKind = "memory";

async function setup(backoff: Partial<Backoff>, options: { timeoutMs?: number } = {}) {
  const receiver = await startReceiver();
  const { events, readModels } = await STORES[storeKind]!();
  const engine = createEngine({ store: events, readModels });
  await engine.openAccount({ external_account_id: ACCOUNT });
  const webhooks = createWebhooks({ engine, outbound: LOCAL, backoff: { baseMs: 20, maxMs: 200, ...backoff }, random: () => 0.5, ...options });
  const endpoint = await webhooks.createEndpoint({ external_account_id: ACCOUNT, url: receiver.url() });
  await webhooks.delivery.start();
  open.push(receiver.close, () => webhooks.delivery.stop(), () => engine.close());
  return { receiver, engine, webhooks, endpoint };
}

/** A stored-card payment authorized, captured and refunded: four public events. */
async function payment(engine: Engine, amount = "10.00"): Promise<string> {
  const { payment_id } = await engine.createIntent({ external_account_id: ACCOUNT, amount, payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
  const ref = { external_account_id: ACCOUNT, payment_id };
  await engine.authorize(ref);
  await engine.capture({ ...ref, amount });
  await engine.refund(ref);
  return payment_id;
}
const TYPES = ["payment_intent.created", "payment_intent.requires_capture", "payment_intent.succeeded", "payment_intent.refunded"];

const of = (received: readonly Received[], paymentId: string) => received.filter((r) => r.event.payment_id === paymentId);
const sequences = (received: readonly Received[]) => received.map((r) => r.event.sequence);

describe.each(Object.keys(STORES))("webhook delivery (%s store)", (kind) => {
  beforeAll(() => void (storeKind = kind));
  it("a receiver answering 500 for a while: the head is retried with growing delays, then every event arrives in order", async () => {
    const { receiver, engine } = await setup({ baseMs: 20, maxMs: 400 });
    receiver.answerWith(() => 500);
    const ids = [await payment(engine), await payment(engine), await payment(engine)];
    await until(() => ids.every((id) => of(receiver.received, id).length >= 5), 10_000, "five failed attempts per payment");
    for (const id of ids) {
      const attempts = of(receiver.received, id);
      // nothing after the head while it is not acknowledged
      expect(new Set(sequences(attempts))).toEqual(new Set([1]));
      // delays 20, 40, 80, 160 ms ceilings, 75 % of each with this jitter: each wait at least that
      const gaps = attempts.slice(1, 5).map((a, i) => a.at - attempts[i]!.at);
      gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(0.75 * 20 * 2 ** i - 5));
    }
    receiver.answerWith(() => 200);
    await until(() => ids.every((id) => of(receiver.acknowledged(), id).length === 4), 10_000, "all delivered after recovery");
    for (const id of ids) {
      expect(of(receiver.acknowledged(), id).map((r) => r.event.type)).toEqual(TYPES);
      // in order: the sequences received (failed attempts included) never go back
      const seen = sequences(of(receiver.received, id));
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
    }
  });

  it("a payment whose deliveries fail does not hold back the others", async () => {
    const { receiver, engine } = await setup({ baseMs: 30, maxMs: 60 });
    // the receiver fails on one payment (told apart by its amount, known before its first event)
    receiver.answerWith((event) => (event.data.object.amount === "13.00" ? 500 : 200));
    const stuck = await payment(engine, "13.00");
    const others = [await payment(engine), await payment(engine)];
    await until(() => others.every((id) => of(receiver.acknowledged(), id).length === 4), 10_000, "the other payments delivered");
    expect(of(receiver.acknowledged(), stuck)).toEqual([]);
    expect(new Set(sequences(of(receiver.received, stuck)))).toEqual(new Set([1]));
    receiver.answerWith(() => 200);
    await until(() => of(receiver.acknowledged(), stuck).length === 4, 10_000, "the stuck payment delivered");
    expect(sequences(of(receiver.acknowledged(), stuck))).toEqual([1, 2, 3, 4]);
  });

  it("a receiver that does not answer in time counts as a failure and is retried", async () => {
    const { receiver, engine, webhooks, endpoint } = await setup({ baseMs: 20, maxMs: 40 }, { timeoutMs: 150 });
    let calls = 0;
    receiver.answerWith(async () => {
      if (calls++ === 0) await new Promise((r) => setTimeout(r, 400));
      return 200;
    });
    const id = await payment(engine);
    await until(() => of(receiver.acknowledged(), id).length >= 5, 10_000, "delivered after the timeout");
    // the first event was posted twice (its slow 200 came after the timeout), then each once
    expect(sequences(of(receiver.acknowledged(), id)).sort()).toEqual([1, 1, 2, 3, 4]);
    // the first event's delivery row: a failed attempt (the timeout), then delivered on the second
    const first = (await webhooks.feed.page(ACCOUNT, { payment_id: id })).data[0]!;
    expect(await deliveryRecords(engine.readModels).get(endpoint.id, first.id)).toMatchObject({ attempts: 2, delivered: true, status_code: 200 });
    // the rows are a table of their own (query() reads tables only), through its endpoint and payment indexes
    // (four rows: the last 2xx may be acknowledged before its row is written)
    await until(async () => (await deliveryRecords(engine.readModels).ofPayment(id)).filter((r) => r.delivered).length === 4, 5_000, "every row delivered");
    const byEndpoint = await engine.readModels.query<{ id: string }>("webhook_deliveries", { where: { endpoint_id: endpoint.id }, order: ["key"], direction: "asc", limit: 10 });
    const byPayment = await engine.readModels.query<{ id: string }>("webhook_deliveries", { where: { payment_id: id }, order: ["key"], direction: "asc", limit: 10 });
    expect(byEndpoint.map((r) => r.id).sort()).toEqual((await webhooks.feed.page(ACCOUNT, { payment_id: id })).data.map((e) => e.id).sort());
    expect(byPayment).toEqual(byEndpoint);
    // and none of them is a document of the shared documents table any more
    expect(await engine.readModels.list("webhook_deliveries", "pay/")).toEqual([]);
  });

  it("past the retry horizon the endpoint is marked failing; its events stay in the feed", async () => {
    const { receiver, engine, webhooks, endpoint } = await setup({ baseMs: 20, maxMs: 40, horizonMs: 250 });
    receiver.answerWith(() => 503);
    const id = await payment(engine);
    await until(async () => (await webhooks.listEndpoints(ACCOUNT))[0]?.status === "failing", 10_000, "endpoint failing");
    const attempts = of(receiver.received, id).length;
    await new Promise((r) => setTimeout(r, 150));
    expect(of(receiver.received, id).length).toBe(attempts);
    expect(sequences(of(receiver.received, id)).every((s) => s === 1)).toBe(true);
    const failing = (await engine.store.readStream(`webhook_endpoint-${endpoint.id}`)).map((e) => e.type);
    expect(failing).toEqual(["WebhookEndpointCreated", "WebhookEndpointFailing"]);
    const feed = await webhooks.feed.page(ACCOUNT, { payment_id: id });
    expect(feed.data.map((e) => e.type)).toEqual(TYPES);
  });

  it("a deleted endpoint gets nothing more", async () => {
    const { receiver, engine, webhooks, endpoint } = await setup({});
    const first = await payment(engine);
    await until(() => of(receiver.acknowledged(), first).length === 4, 5_000, "delivered");
    await webhooks.deleteEndpoint({ external_account_id: ACCOUNT, endpoint_id: endpoint.id });
    const second = await payment(engine);
    await webhooks.feed.catchUp();
    await new Promise((r) => setTimeout(r, 200));
    expect(of(receiver.received, second)).toEqual([]);
    expect(await webhooks.listEndpoints(ACCOUNT)).toEqual([]);
  });
});


describe("what a delivery may reach", () => {
  it("outside the sandbox: no endpoint at a special-purpose address or over http, and no connection to one (names resolved at connection time)", async () => {
    const engine = createEngine();
    await engine.openAccount({ external_account_id: ACCOUNT });
    const webhooks = createWebhooks({ engine, outbound: PRODUCTION });
    for (const url of ["https://127.0.0.1:8080/hooks", "https://localhost/hooks", "https://[::1]/", "https://10.0.0.7/", "https://169.254.169.254/latest", "https://[::7f00:1]/", "https://[2002:7f00:1::]/", "https://[::ffff:0:7f00:1]/", "https://[::ffff:0:a9fe:a9fe]/", "https://[::ffff:0:0:7f00:1]/", "https://192.0.2.10/"]) {
      await expect(webhooks.createEndpoint({ external_account_id: ACCOUNT, url }), url).rejects.toMatchObject({ code: "url_not_allowed", param: "url" });
    }
    await expect(webhooks.createEndpoint({ external_account_id: ACCOUNT, url: "http://hooks.example.com/x" })).rejects.toMatchObject({ code: "url_invalid", param: "url" });
    await expect(webhooks.createEndpoint({ external_account_id: ACCOUNT, url: "https://hooks.example.com:0/x" })).rejects.toMatchObject({ code: "url_invalid", param: "url", message: expect.stringContaining("port 0") });
    await expect(webhooks.createEndpoint({ external_account_id: ACCOUNT, url: "https://hooks.example.com:99999/x" })).rejects.toMatchObject({ code: "url_invalid", param: "url", message: "url: port 99999 is not a port (1 to 65535)" });
    expect((await webhooks.createEndpoint({ external_account_id: ACCOUNT, url: "https://hooks.example.com/x" })).status).toBe("enabled");
    await engine.close();

    // a name is judged at registration on what it resolves to then: one reaching this host or its network is refused
    const names: Record<string, string[]> = { "internal.example.com": ["10.1.2.3"], "mixed.example.com": ["93.184.215.14", "127.0.0.1"], "public.example.com": ["93.184.215.14"] };
    const resolving = createOutbound({ sandbox: false, allowPrivate: false, allowlist: [], resolve: async (host) => {
      if (!names[host]) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
      return names[host].map((address) => ({ address, family: 4 }));
    } });
    const named = createEngine();
    await named.openAccount({ external_account_id: ACCOUNT });
    const byNames = createWebhooks({ engine: named, outbound: resolving });
    await expect(byNames.createEndpoint({ external_account_id: ACCOUNT, url: "https://internal.example.com/h" })).rejects.toMatchObject({ code: "url_not_allowed", param: "url", message: expect.stringMatching(/internal\.example\.com resolves to 10\.1\.2\.3 which is a special-purpose address \(private-use\)/) });
    await expect(byNames.createEndpoint({ external_account_id: ACCOUNT, url: "https://mixed.example.com/h" })).rejects.toMatchObject({ code: "url_not_allowed", message: expect.stringMatching(/loopback/) });
    expect((await byNames.createEndpoint({ external_account_id: ACCOUNT, url: "https://public.example.com/h" })).status).toBe("enabled");
    // a name that does not resolve yet is taken: each delivery resolves it again
    expect((await byNames.createEndpoint({ external_account_id: ACCOUNT, url: "https://not-yet.example.com/h" })).status).toBe("enabled");
    expect((await named.store.readAll()).filter((e) => e.type === "WebhookEndpointCreated")).toHaveLength(2);
    await named.close();

    // localhost (with the final dot, and *.localhost) names this host: refused unless the allowlist allows both loopback addresses
    const loopbacks = async () => [{ address: "127.0.0.1", family: 4 }, { address: "::1", family: 6 }];
    const allowing = (allowlist: string[]) => createOutbound({ sandbox: false, allowPrivate: false, allowlist, resolve: loopbacks });
    const local = createEngine();
    await local.openAccount({ external_account_id: ACCOUNT });
    const register = (allowlist: string[], url: string) => createWebhooks({ engine: local, outbound: allowing(allowlist) }).createEndpoint({ external_account_id: ACCOUNT, url });
    for (const url of ["https://localhost/h", "https://localhost./h", "https://api.localhost/h", "https://api.localhost./h"]) {
      await expect(register([], url), url).rejects.toMatchObject({ code: "url_not_allowed", message: expect.stringMatching(/names this host \(loopback: 127\.0\.0\.1 and ::1\).*allow both in OUTBOUND_ALLOWLIST/) });
      await expect(register(["127.0.0.1"], url), url).rejects.toMatchObject({ code: "url_not_allowed", message: expect.stringContaining("allow both in OUTBOUND_ALLOWLIST; ::1 is not allowed") });
      expect((await register(["127.0.0.1", "::1"], url)).status, url).toBe("enabled");
    }
    expect((await register(["127.0.0.0/8", "::1/128"], "https://localhost:5360/h")).url).toBe("https://localhost:5360/h");
    await local.close();

    const receiver = await startReceiver();
    try {
      const port = new URL(receiver.url()).port;
      // https only: refused before any connection
      const plain = await postWith(PRODUCTION)(`http://localhost:${port}/hooks`, "{}", {}, { timeoutMs: 2_000 });
      expect(plain).toEqual({ status: null, error: expect.stringMatching(/https only/) });
      // a name is judged on the address it resolves to, when connecting
      const sandboxed = createOutbound({ sandbox: true, allowPrivate: false, allowlist: [] });
      const byName = await postWith(sandboxed)(`http://localhost:${port}/hooks`, "{}", {}, { timeoutMs: 2_000 });
      expect(byName.status).toBeNull();
      expect(byName.error).toMatch(/localhost names this host \(loopback: 127\.0\.0\.1 and ::1\)/);
      const byAddress = await postWith(sandboxed)(`http://127.0.0.1:${port}/hooks`, "{}", {}, { timeoutMs: 2_000 });
      expect(byAddress.error).toMatch(/\(loopback\).*WEBHOOK_ALLOW_PRIVATE/);
      // an allowlist naming one of a name's addresses does not allow the name: the refusal says which were allowed
      const bothLoopbacks = async () => [{ address: "::1", family: 6 }, { address: "127.0.0.1", family: 4 }];
      const oneAllowed = createOutbound({ sandbox: true, allowPrivate: false, allowlist: ["127.0.0.1"], resolve: bothLoopbacks });
      const partly = await postWith(oneAllowed)(`http://loopbacks.example:${port}/hooks`, "{}", {}, { timeoutMs: 2_000 });
      expect(partly.error).toMatch(/loopbacks\.example resolves to ::1 .*\(loopback\).*\(its other address 127\.0\.0\.1 allowed: a name is requested only when every address it resolves to is\)/);
      // localhost stands for both loopback addresses whatever the resolver says: refused by name, saying to allow both
      const localhost = await postWith(oneAllowed)(`http://localhost:${port}/hooks`, "{}", {}, { timeoutMs: 2_000 });
      expect(localhost.error).toMatch(/localhost names this host .*allow both in OUTBOUND_ALLOWLIST; ::1 is not allowed/);
      expect(receiver.received).toEqual([]);
      const bothAllowed = createOutbound({ sandbox: true, allowPrivate: false, allowlist: ["127.0.0.1", "::1"], resolve: async () => [{ address: "127.0.0.1", family: 4 }, { address: "::1", family: 6 }] });
      expect(await postWith(bothAllowed)(`http://localhost:${port}/hooks`, "{}", {}, { timeoutMs: 2_000 })).toEqual({ status: 200, error: null });
      receiver.received.length = 0;
      // WEBHOOK_ALLOW_PRIVATE=1 (sandbox): delivered
      expect(await postWith(LOCAL)(`http://localhost:${port}/hooks`, "{}", {}, { timeoutMs: 2_000 })).toEqual({ status: 200, error: null });
    } finally {
      await receiver.close();
    }
  });

  it("a 2xx acknowledges whatever its body: a receiver answering 200 with megabytes is delivered, not failed", async () => {
    const big = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "text/html" }).end("x".repeat(3 << 20)));
    });
    await new Promise<void>((resolve) => big.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(big.address() as AddressInfo).port}/hooks`;
      expect(await postWith(LOCAL)(url, JSON.stringify({ id: "evt_big" }), {}, { timeoutMs: 5_000 })).toEqual({ status: 200, error: null });
      // a processor's answer is still bounded (the adapters read it): the same answer is an error there
      await expect(LOCAL.request(url, { body: "{}" })).rejects.toThrow(/answer larger than/);
    } finally {
      await new Promise((resolve) => big.close(resolve));
    }
  });

  it("a 2xx acknowledges when it comes: a receiver whose body trickles in past the time allowed is delivered, not 'no answer'", async () => {
    const slow = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/plain" }).write("x");
        setTimeout(() => res.end("y"), 1_500).unref();
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hooks`;
      expect(await postWith(LOCAL)(url, JSON.stringify({ id: "evt_slow" }), {}, { timeoutMs: 500 })).toEqual({ status: 200, error: null });
    } finally {
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  });

  it("follows no redirect: a 3xx is not an acknowledgement", async () => {
    const receiver = await startReceiver();
    try {
      receiver.answerWith(() => 302);
      const result = await postWith(LOCAL)(receiver.url(), JSON.stringify({ id: "evt_1" }), {}, { timeoutMs: 2_000 });
      expect(result).toEqual({ status: 302, error: null });
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });
});
