// One tenant's webhooks cannot hurt another: at most N endpoints per account (16 by default), a
// bound on the posts in flight for all of one account's endpoints, a circuit breaker per endpoint
// (a receiver that never answers gets a bounded number of posts, one at a time, whatever its
// backlog), delivery state kept as rows (a failing receiver writes no event), and a delivery
// waiting in backoff retried at once on request (library and HTTP route).
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { BREAKER_THRESHOLD } from "../../src/webhooks/breaker.js";
import type { DeliveryNotice } from "../../src/webhooks/delivery.js";
import { createEngine, type Engine } from "../../src/engine.js";
import { createWebhooks } from "../../src/index.js";
import { FEED } from "../../src/webhooks/feed.js";
import { isoTimestamp } from "../../src/clock.js";
import { createOutbound } from "../../src/outbound/client.js";
import { expectProblem, startApi } from "../http/harness.js";
import { startReceiver, until } from "./receiver.js";
import { openDurable } from "../store/processes/stores.js";
import { testDatabase } from "../support/postgres.js";

const LOCAL = createOutbound({ sandbox: true, allowPrivate: true, allowlist: [] });
const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

async function charge(engine: Engine, account: string): Promise<string> {
  const { payment_id } = await engine.createIntent({ external_account_id: account, amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
  return payment_id;
}

describe("webhook tenant isolation", () => {
  it("an account has at most maxEndpointsPerAccount endpoints (a 409 naming the limit); deleting one frees a place; other accounts are not counted", async () => {
    const engine = createEngine();
    for (const account of ["acct_many", "acct_few"]) await engine.openAccount({ external_account_id: account });
    const webhooks = createWebhooks({ engine, outbound: LOCAL, maxEndpointsPerAccount: 3 });
    open.push(() => engine.close());
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await webhooks.createEndpoint({ external_account_id: "acct_many", url: `https://hooks.example.com/${i}` }));
    await expect(webhooks.createEndpoint({ external_account_id: "acct_many", url: "https://hooks.example.com/3" })).rejects.toMatchObject({ status: 409, code: "webhook_endpoint_limit" });
    expect((await webhooks.createEndpoint({ external_account_id: "acct_few", url: "https://hooks.example.com/x" })).status).toBe("enabled");
    await webhooks.deleteEndpoint({ external_account_id: "acct_many", endpoint_id: made[0]!.id });
    expect((await webhooks.createEndpoint({ external_account_id: "acct_many", url: "https://hooks.example.com/3" })).status).toBe("enabled");
    // the default is 16
    expect((await createWebhooks({ engine, outbound: LOCAL }).listEndpoints("acct_many")).length).toBe(3);
  });

  it("created at once on PostgreSQL (every step a round trip), an account still gets at most the limit: each creation counts the ones before it", async () => {
    const { events, readModels } = await openDurable({ kind: "postgres", url: await testDatabase(), schema: `t_${randomUUID().replaceAll("-", "").slice(0, 12)}` });
    const engine = createEngine({ store: events, readModels });
    open.push(() => engine.close());
    await engine.openAccount({ external_account_id: "acct_rush" });
    const webhooks = createWebhooks({ engine, outbound: LOCAL, maxEndpointsPerAccount: 3 });
    const rush = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => webhooks.createEndpoint({ external_account_id: "acct_rush", url: `https://hooks.example.com/r${i}` })));
    expect(rush.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    expect(rush.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(Array(9).fill("webhook_endpoint_limit"));
    expect((await webhooks.listEndpoints("acct_rush")).length).toBe(3);
  });

  it("an account's endpoints share accountConcurrency posts in flight; another account's deliveries go on; no event is written for attempts", async () => {
    const slow = await startReceiver();
    const fast = await startReceiver();
    let inFlight = 0;
    let most = 0;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    slow.answerWith(async () => {
      most = Math.max(most, ++inFlight);
      await held;
      inFlight--;
      return 200;
    });
    const engine = createEngine();
    for (const account of ["acct_noisy", "acct_quiet"]) await engine.openAccount({ external_account_id: account });
    const webhooks = createWebhooks({ engine, outbound: LOCAL, accountConcurrency: 2, timeoutMs: 30_000 });
    for (let i = 0; i < 3; i++) await webhooks.createEndpoint({ external_account_id: "acct_noisy", url: slow.url(`/e${i}`), event_types: ["payment_intent.created"] });
    await webhooks.createEndpoint({ external_account_id: "acct_quiet", url: fast.url(), event_types: ["payment_intent.created"] });
    await webhooks.delivery.start();
    open.push(slow.close, fast.close, () => webhooks.delivery.stop(), async () => release());
    open.push(() => engine.close());
    const before = (await engine.store.readAll()).length;
    for (let i = 0; i < 4; i++) await charge(engine, "acct_noisy");
    const quiet = await charge(engine, "acct_quiet");
    // the quiet account is delivered while the noisy one's receivers hang
    await until(() => fast.received.some((r) => r.event.payment_id === quiet), 5_000, "the quiet account's event");
    await new Promise((r) => setTimeout(r, 300));
    expect(most).toBe(2);
    release();
    await until(() => slow.acknowledged().length === 12, 10_000, "every noisy delivery (4 payments x 3 endpoints)");
    expect(most).toBe(2);
    // the five payments' events, nothing for the attempts
    expect((await engine.store.readAll()).slice(before).map((e) => e.type)).toEqual(Array(5).fill("PaymentIntentCreated"));
  });

  it("an account whose endpoints never answer: each gets BREAKER_THRESHOLD posts, one at a time, then none until its backoff, whatever its backlog; another account's deliveries all arrive", async () => {
    // the black hole: takes each request and never answers (each post times out); counts them per endpoint
    const posts = new Map<string, number>();
    const open_ = new Map<string, number>();
    let mostOpen = 0;
    const hole = createServer((req) => {
      const path = req.url!;
      posts.set(path, (posts.get(path) ?? 0) + 1);
      open_.set(path, (open_.get(path) ?? 0) + 1);
      mostOpen = Math.max(mostOpen, open_.get(path)!);
      req.socket.once("close", () => open_.set(path, open_.get(path)! - 1));
    });
    await new Promise<void>((resolve) => hole.listen(0, "127.0.0.1", resolve));
    const holeUrl = (path: string) => `http://127.0.0.1:${(hole.address() as AddressInfo).port}${path}`;
    const fast = await startReceiver();
    const engine = createEngine();
    for (const account of ["acct_noisy", "acct_quiet"]) await engine.openAccount({ external_account_id: account });
    const notices: DeliveryNotice[] = [];
    // probes after an hour: none within the test
    const webhooks = createWebhooks({ engine, outbound: LOCAL, timeoutMs: 100, backoff: { baseMs: 3_600_000, maxMs: 3_600_000 }, onNotice: (n) => notices.push(n) });
    const ENDPOINTS = 4;
    const noisyEndpoints = [];
    for (let i = 0; i < ENDPOINTS; i++) noisyEndpoints.push(await webhooks.createEndpoint({ external_account_id: "acct_noisy", url: holeUrl(`/e${i}`) }));
    await webhooks.createEndpoint({ external_account_id: "acct_quiet", url: fast.url() });
    open.push(fast.close, () => new Promise<void>((r) => (hole.closeAllConnections(), hole.close(() => r()))), () => webhooks.delivery.stop(), () => engine.close());
    // a backlog: 40 payments' events to each of the noisy endpoints (160 deliveries), then the quiet account's
    const before = (await engine.store.readAll()).length;
    for (let i = 0; i < 40; i++) await charge(engine, "acct_noisy");
    const quiet = [await charge(engine, "acct_quiet"), await charge(engine, "acct_quiet")];
    await webhooks.delivery.start();
    await until(() => notices.filter((n) => n.change === "opened").length === ENDPOINTS, 20_000, "every noisy endpoint's breaker open");
    await until(() => quiet.every((id) => fast.acknowledged().some((r) => r.event.payment_id === id)), 10_000, "the quiet account's deliveries");
    // a third quiet payment, delivered after the breakers opened: the noisy endpoints got nothing more meanwhile
    const later = await charge(engine, "acct_quiet");
    await until(() => fast.acknowledged().some((r) => r.event.payment_id === later), 10_000, "the quiet account's later delivery");
    expect([...posts.values()]).toEqual(Array(ENDPOINTS).fill(BREAKER_THRESHOLD));
    expect(mostOpen).toBe(1);
    // a row per attempted delivery (each a different payment's first event, one attempt each), never one per pending delivery
    for (const endpoint of noisyEndpoints) {
      const rows = (await webhooks.listDeliveries({ external_account_id: "acct_noisy", endpoint_id: endpoint.id })).data;
      expect(rows.map((r) => r.attempts)).toEqual(Array(BREAKER_THRESHOLD).fill(1));
      expect(new Set(rows.map((r) => r.payment_id)).size).toBe(BREAKER_THRESHOLD);
      expect(rows.every((r) => !r.delivered && r.error?.includes("no answer"))).toBe(true);
    }
    expect(notices.filter((n) => n.external_account_id === "acct_quiet")).toEqual([]);
    // every quiet event arrived once; the endpoints stay enabled (retried for days, not marked failing)
    expect(fast.received.length).toBe(fast.acknowledged().length);
    expect((await webhooks.listEndpoints("acct_noisy")).map((e) => e.status)).toEqual(Array(ENDPOINTS).fill("enabled"));
    expect((await engine.store.readAll()).slice(before).every((e) => e.type === "PaymentIntentCreated")).toBe(true);
  });

  it("endpoints waiting for their account's slots sleep until one is freed: the store is not read in a loop meanwhile", async () => {
    const slow = await startReceiver();
    const fast = await startReceiver();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let arrived = 0;
    slow.answerWith(async () => (arrived++, await held, 200));
    const engine = createEngine();
    for (const account of ["acct_noisy", "acct_quiet"]) await engine.openAccount({ external_account_id: account });
    // the feed and the workers read through these: count the reads
    let reads = 0;
    const { list, get, query } = engine.readModels;
    Object.assign(engine.readModels, {
      list: (...args: Parameters<typeof list>) => (reads++, list.apply(engine.readModels, args)),
      get: (...args: Parameters<typeof get>) => (reads++, get.apply(engine.readModels, args)),
      query: (...args: Parameters<typeof query>) => (reads++, query.apply(engine.readModels, args)),
    });
    const webhooks = createWebhooks({ engine, outbound: LOCAL, accountConcurrency: 1, timeoutMs: 30_000 });
    for (let i = 0; i < 3; i++) await webhooks.createEndpoint({ external_account_id: "acct_noisy", url: slow.url(`/e${i}`), event_types: ["payment_intent.created"] });
    await webhooks.createEndpoint({ external_account_id: "acct_quiet", url: fast.url(), event_types: ["payment_intent.created"] });
    open.push(slow.close, fast.close, () => webhooks.delivery.stop(), async () => release(), () => engine.close());
    for (let i = 0; i < 3; i++) await charge(engine, "acct_noisy");
    await webhooks.delivery.start();
    // one post holds the account's one slot; the other two endpoints have posts due and wait
    await until(() => arrived === 1, 5_000, "the first noisy post");
    // a quiet payment: the feed indexes it, every worker looks once, the quiet one posts it
    const quiet = await charge(engine, "acct_quiet");
    await until(() => fast.acknowledged().some((r) => r.event.payment_id === quiet), 5_000, "the quiet delivery");
    // the quiet worker's last turn after its post: reads come to rest (a spinning worker never does)
    let last = -1;
    await until(async () => (await new Promise((r) => setTimeout(r, 50)), last === reads || ((last = reads), false)), 5_000, "the reads at rest");
    // then nothing to do until a slot is freed: no read at all (a spinning worker read the feed on every turn)
    const before = reads;
    await new Promise((r) => setTimeout(r, 300));
    expect(reads - before).toBe(0);
    expect(arrived).toBe(1);
    release();
    await until(() => slow.acknowledged().length === 9, 10_000, "every noisy delivery (3 payments x 3 endpoints)");
  });

  it("a batch the feed indexed wakes only the workers of the accounts it touched: another account's worker does not read the feed for it", async () => {
    const busy = await startReceiver();
    const other = await startReceiver();
    const engine = createEngine();
    for (const account of ["acct_busy", "acct_other"]) await engine.openAccount({ external_account_id: account });
    // the workers read their account's feed entries through query(): count the other account's
    let otherReads = 0;
    const { query } = engine.readModels;
    Object.assign(engine.readModels, {
      query: (...args: Parameters<typeof query>) => (args[0] === FEED.events && args[1].where.account === "acct_other" && otherReads++, query.apply(engine.readModels, args)),
    });
    const webhooks = createWebhooks({ engine, outbound: LOCAL });
    await webhooks.createEndpoint({ external_account_id: "acct_busy", url: busy.url(), event_types: ["payment_intent.created"] });
    await webhooks.createEndpoint({ external_account_id: "acct_other", url: other.url(), event_types: ["payment_intent.created"] });
    open.push(busy.close, other.close, () => webhooks.delivery.stop(), () => engine.close());
    await webhooks.delivery.start();
    const first = await charge(engine, "acct_other");
    await until(() => other.acknowledged().some((r) => r.event.payment_id === first), 5_000, "the other account's delivery");
    // at rest, then ten batches of the busy account alone
    let last = -1;
    await until(async () => (await new Promise((r) => setTimeout(r, 50)), last === otherReads || ((last = otherReads), false)), 5_000, "the other account's reads at rest");
    const before = otherReads;
    for (let i = 0; i < 10; i++) {
      const id = await charge(engine, "acct_busy");
      await until(() => busy.acknowledged().some((r) => r.event.payment_id === id), 5_000, "the busy account's delivery");
    }
    expect(otherReads - before).toBe(0);
    // its own events still wake it
    const second = await charge(engine, "acct_other");
    await until(() => other.acknowledged().some((r) => r.event.payment_id === second), 5_000, "the other account's next delivery");
    expect(otherReads).toBeGreaterThan(before);
  });

  it("an endpoint's deliveries are listed newest first, a page at a time (limit, starting_after, has_more), over HTTP too", async () => {
    const receiver = await startReceiver();
    const api = await startApi();
    open.push(receiver.close, () => api.close());
    const m = await api.merchant("acct_pages");
    const webhooks = createWebhooks({ engine: api.engine, outbound: LOCAL });
    const endpoint = await webhooks.createEndpoint({ external_account_id: m.account, url: receiver.url(), event_types: ["payment_intent.created"] });
    await webhooks.delivery.start();
    open.push(() => webhooks.delivery.stop());
    const payments: string[] = [];
    for (let i = 0; i < 5; i++) payments.push(await charge(api.engine, m.account));
    const all = async () => (await webhooks.listDeliveries({ external_account_id: m.account, endpoint_id: endpoint.id, limit: 100 })).data;
    await until(async () => (await all()).filter((r) => r.delivered).length === 5, 5_000, "every delivery acknowledged");
    expect((await all()).map((r) => r.payment_id)).toEqual([...payments].reverse());
    const path = `/v2/webhook_endpoints/${endpoint.id}/deliveries?external_account_id=${m.account}`;
    const first = (await m.get(`${path}&limit=2`)).body;
    expect([first.data.map((r: { payment_id: string }) => r.payment_id), first.has_more]).toEqual([[payments[4], payments[3]], true]);
    const second = (await m.get(`${path}&limit=2&starting_after=${first.data[1].id}`)).body;
    expect([second.data.map((r: { payment_id: string }) => r.payment_id), second.has_more]).toEqual([[payments[2], payments[1]], true]);
    const last = (await m.get(`${path}&limit=2&starting_after=${second.data[1].id}`)).body;
    expect([last.data.map((r: { payment_id: string }) => r.payment_id), last.has_more]).toEqual([[payments[0]], false]);
    expect((await m.get(path)).body.data).toHaveLength(5); // 20 by default
    expectProblem(await m.get(`${path}&limit=101`), 400, "parameter_invalid", "limit");
    // an id that is no delivery of this endpoint is named, never read as "from the start" again
    expectProblem(await m.get(`${path}&limit=2&starting_after=evt_nope`), 404, "resource_missing", "starting_after");
  });

  it("a delivery waiting in backoff is retried at once on request; an acknowledged one is 409, over HTTP too", async () => {
    const receiver = await startReceiver();
    let failing = true;
    receiver.answerWith(() => (failing ? 500 : 200));
    const api = await startApi();
    open.push(receiver.close, () => api.close());
    const m = await api.merchant("acct_retry");
    const webhooks = createWebhooks({ engine: api.engine, outbound: LOCAL, backoff: { baseMs: 600_000, maxMs: 600_000 } });
    const endpoint = await webhooks.createEndpoint({ external_account_id: m.account, url: receiver.url(), event_types: ["payment_intent.created"] });
    await webhooks.delivery.start();
    open.push(() => webhooks.delivery.stop());
    await charge(api.engine, m.account);
    await until(() => receiver.received.length === 1, 5_000, "the first attempt");
    // the receiver records a post before answering it: the row follows the answer
    await until(async () => ((await webhooks.listDeliveries({ external_account_id: m.account, endpoint_id: endpoint.id })).data).length === 1, 5_000, "the attempt's row");
    const [row] = (await webhooks.listDeliveries({ external_account_id: m.account, endpoint_id: endpoint.id })).data;
    expect(row).toMatchObject({ attempts: 1, delivered: false, status_code: 500, next_attempt_at: expect.any(String) });
    failing = false;
    // the row as the retry found it, its next attempt now (not the backoff's, 10 min later)
    expect(await webhooks.retryDelivery({ external_account_id: m.account, endpoint_id: endpoint.id, event_id: row!.id })).toEqual({ ...row, next_attempt_at: isoTimestamp(api.clock.now()), endpoint_reenabled: false });
    await until(() => receiver.acknowledged().length === 1, 5_000, "the retry, long before the 10 min backoff");
    await until(async () => ((await webhooks.listDeliveries({ external_account_id: m.account, endpoint_id: endpoint.id })).data)[0]!.delivered, 5_000, "the row updated");
    await expect(webhooks.retryDelivery({ external_account_id: m.account, endpoint_id: endpoint.id, event_id: row!.id })).rejects.toMatchObject({ status: 409, code: "delivery_delivered" });

    // the routes (the server's own webhooks object: the same store, so the same rows)
    const listed = await m.get(`/v2/webhook_endpoints/${endpoint.id}/deliveries?external_account_id=${m.account}`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: row!.id, attempts: 2, delivered: true, status_code: 200 })]);
    expectProblem(await m.post(`/v2/webhook_endpoints/${endpoint.id}/deliveries/${row!.id}/retry`, {}), 409, "delivery_delivered", null);
    expectProblem(await m.post(`/v2/webhook_endpoints/${endpoint.id}/deliveries/evt_unknown/retry`, {}), 404, "resource_missing", "event_id");
    // the ids come in the path: the same fields in the body too (silently overridden before) are refused
    expectProblem(await m.post(`/v2/webhook_endpoints/${endpoint.id}/deliveries/${row!.id}/retry`, { endpoint_id: "we_other", event_id: "evt_other" }), 400, "unknown_parameter", "endpoint_id");
    const other = await api.merchant("acct_retry_other");
    expectProblem(await other.post(`/v2/webhook_endpoints/${endpoint.id}/deliveries/${row!.id}/retry`, {}), 404, "resource_missing", "endpoint_id");
    // no body at all: the field it lacks is named; the account sent in the query (as the GET and DELETE take it) is refused, saying where it goes
    expectProblem(await api.request("POST", `/v2/webhook_endpoints/${endpoint.id}/deliveries/${row!.id}/retry`, { key: m.key }), 400, "parameter_missing", "external_account_id");
    expectProblem(await api.request("POST", `/v2/webhook_endpoints/${endpoint.id}/deliveries/${row!.id}/retry?external_account_id=${m.account}`, { key: m.key }), 400, "unknown_parameter", "external_account_id");
  });

  it("a retry of an endpoint marked failing enables it again (the answer says so): its deliveries resume with a fresh horizon", async () => {
    const receiver = await startReceiver();
    let failing = true;
    receiver.answerWith(() => (failing ? 503 : 200));
    const api = await startApi();
    open.push(receiver.close, () => api.close());
    const m = await api.merchant("acct_revive");
    const webhooks = createWebhooks({ engine: api.engine, outbound: LOCAL, backoff: { baseMs: 20, maxMs: 40, horizonMs: 200 } });
    const endpoint = await webhooks.createEndpoint({ external_account_id: m.account, url: receiver.url(), event_types: ["payment_intent.created"] });
    await webhooks.delivery.start();
    open.push(() => webhooks.delivery.stop());
    const ids = [await charge(api.engine, m.account), await charge(api.engine, m.account)];
    // the server's clock is manual: time passes as the test says, past the 200 ms horizon
    await until(() => receiver.received.length === 2, 5_000, "the first attempts");
    await until(async () => (await api.clock.advance(50), (await webhooks.listEndpoints(m.account))[0]?.status === "failing"), 10_000, "the endpoint failing");
    const rows = (await webhooks.listDeliveries({ external_account_id: m.account, endpoint_id: endpoint.id })).data;
    expect(rows.map((r) => r.delivered)).toEqual([false, false]);
    failing = false;
    // over HTTP: the answer is the row, and says the endpoint is enabled again
    const retry = (id: string) => m.post(`/v2/webhook_endpoints/${endpoint.id}/deliveries/${id}/retry`, {}, { "idempotency-key": "retry-1" });
    const retried = await retry(rows[0]!.id);
    expect(retried.status).toBe(200);
    // the key again on the other delivery: another request (the path's ids are part of it), not a replay of the first's answer
    expect(await retry(rows[1]!.id)).toMatchObject({ status: 422, body: { code: "idempotency_key_reused" } });
    expect((await retry(rows[0]!.id)).body).toEqual(retried.body);
    // the row as the retry found it (a failing endpoint's has no next attempt), its next attempt now
    expect(retried.body).toEqual({ ...rows[0], next_attempt_at: isoTimestamp(api.clock.now()), endpoint_reenabled: true });
    expect((await m.get(`/v2/webhook_endpoints?external_account_id=${m.account}`)).body.data[0]).toMatchObject({ id: endpoint.id, status: "enabled" });
    // both payments' events arrive (the other one at its next backoff, not marked failing again at once)
    await until(async () => (await api.clock.advance(10), ids.every((id) => receiver.acknowledged().some((r) => r.event.payment_id === id))), 10_000, "both delivered after the re-enable");
    expect((await webhooks.listEndpoints(m.account))[0]?.status).toBe("enabled");
    const events = (await api.engine.store.readStream(`webhook_endpoint-${endpoint.id}`)).map((e) => e.type);
    expect(events).toEqual(["WebhookEndpointCreated", "WebhookEndpointFailing", "WebhookEndpointEnabled"]);
    // a second retry of an enabled endpoint's acknowledged delivery: 409, nothing re-enabled
    expectProblem(await m.post(`/v2/webhook_endpoints/${endpoint.id}/deliveries/${rows[0]!.id}/retry`, {}), 409, "delivery_delivered", null);
  });
});
