// Delivery on a manual clock (src/clock.ts), so the moments that matter are exact: the lease is
// renewed when its renewal time comes (not one turn later, nor never), an endpoint whose
// payments all fail past the horizon at the same moment is marked failing once, not once per
// payment (and none of its rows shows a next attempt then), and an endpoint failing in a row is
// probed once per backoff (its circuit breaker).
import { afterEach, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createEngine, type Engine } from "../../src/engine.js";
import { createWebhooks } from "../../src/index.js";
import { createOutbound } from "../../src/outbound/client.js";
import type { DeliveryNotice, DeliveryState } from "../../src/webhooks/delivery.js";
import { BREAKER_THRESHOLD } from "../../src/webhooks/breaker.js";
import { until } from "./receiver.js";
import type { Post, PostResult } from "../../src/webhooks/transport.js";
import { isoTimestamp } from "../../src/clock.js";

const ACCOUNT = "acct_clock";
const LOCAL = createOutbound({ sandbox: true, allowPrivate: true, allowlist: [] });
const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

async function setup(post: Post, options: { leaseMs?: number; horizonMs?: number; onNotice?: (notice: DeliveryNotice) => void } = {}) {
  const clock = manualClock();
  const engine = createEngine({ clock });
  await engine.openAccount({ external_account_id: ACCOUNT });
  const webhooks = createWebhooks({ engine, outbound: LOCAL, post, random: () => 0.5, leaseMs: options.leaseMs ?? 30_000, backoff: { baseMs: 1_000, maxMs: 1_000, horizonMs: options.horizonMs ?? 60_000 }, ...(options.onNotice && { onNotice: options.onNotice }) });
  const endpoint = await webhooks.createEndpoint({ external_account_id: ACCOUNT, url: "http://127.0.0.1:9/hooks" });
  await webhooks.delivery.start();
  open.push(() => webhooks.delivery.stop(), () => engine.close());
  const state = () => engine.readModels.get<DeliveryState>(`webhook_delivery:${endpoint.id}`, "state");
  return { clock, engine, webhooks, endpoint, state };
}

async function payment(engine: Engine): Promise<string> {
  const { payment_id } = await engine.createIntent({ external_account_id: ACCOUNT, amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
  return payment_id;
}

/** Resolves true if `work` ends within `ms` of real time (a spinning worker never lets it end). */
const within = (work: Promise<void>, ms: number) => Promise.race([work.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe("webhook delivery on a manual clock", () => {
  it("renews the lease exactly when a third of it has passed", async () => {
    const { clock, state } = await setup(async () => ({ status: 200, error: null }), { leaseMs: 30_000 });
    await clock.advance(0);
    const start = clock.now();
    expect((await state())?.lease?.until).toBe(start + 30_000);
    // the worker sleeps until until - 2/3 lease and must renew then: at that moment the margin equals 2/3 lease
    expect(await within(clock.advance(10_000), 3_000)).toBe(true);
    expect((await state())?.lease?.until).toBe(start + 10_000 + 30_000);
    expect(await within(clock.advance(10_000), 3_000)).toBe(true);
    expect((await state())?.lease?.until).toBe(start + 20_000 + 30_000);
  });

  it("marks an endpoint failing once when several payments' deliveries pass the horizon together", async () => {
    const posted: string[] = [];
    const { clock, engine, endpoint, webhooks } = await setup(async (_url, body) => (posted.push(body), { status: 503, error: null }), { horizonMs: 5_000 });
    await Promise.all([payment(engine), payment(engine), payment(engine)]);
    await webhooks.feed.catchUp();
    for (let i = 0; i < 10; i++) await clock.advance(1_000);
    const streams = new Set(posted.map((b) => (JSON.parse(b) as { payment_id: string }).payment_id));
    expect(streams.size).toBe(3);
    const events = (await engine.store.readStream(`webhook_endpoint-${endpoint.id}`)).map((e) => e.type);
    expect(events).toEqual(["WebhookEndpointCreated", "WebhookEndpointFailing"]);
    expect((await webhooks.listEndpoints(ACCOUNT))[0]?.status).toBe("failing");
  });

  it("once the endpoint is marked failing, none of its undelivered rows shows a next attempt; a retry that enables it again gives each its time", async () => {
    let answer: () => Promise<PostResult> = async () => ({ status: 503, error: null });
    const { clock, engine, endpoint, webhooks } = await setup(() => answer(), { horizonMs: 5_000 });
    const ids = [await payment(engine), await payment(engine)];
    await webhooks.feed.catchUp();
    // failing, and its worker ended (its last writes done)
    await until(async () => (await clock.advance(500), (await webhooks.listEndpoints(ACCOUNT))[0]?.status === "failing" && webhooks.delivery.wakers().length === 0), 5_000, "the endpoint failing");
    const ref = { external_account_id: ACCOUNT, endpoint_id: endpoint.id };
    const rows = (await webhooks.listDeliveries(ref)).data;
    // each payment's first event tried, neither acknowledged: both rows say failed, not retrying
    expect(new Set(rows.map((r) => r.payment_id))).toEqual(new Set(ids));
    expect(rows.map((r) => [r.delivered, r.next_attempt_at])).toEqual([
      [false, null],
      [false, null],
    ]);
    // the retry of one enables the endpoint: its post held, the other payment's waits its turn (one post at first)
    const held: Array<(result: PostResult) => void> = [];
    answer = () => new Promise((resolve) => held.push(resolve));
    // before the stop waits for them: the held posts acknowledged, the next ones at once
    open.push(async () => ((answer = async () => ({ status: 200, error: null })), held.forEach((resolve) => resolve({ status: 200, error: null }))));
    const retried = await webhooks.retryDelivery({ ...ref, event_id: rows[0]!.id });
    expect(retried.endpoint_reenabled).toBe(true);
    await until(async () => (await clock.advance(0), held.length === 1), 5_000, "the retried post");
    const due = isoTimestamp(clock.now());
    expect((await webhooks.listDeliveries(ref)).data.map((r) => [r.id, r.next_attempt_at])).toEqual(rows.map((r) => [r.id, due]));
  });

  it("an endpoint failing in a row: BREAKER_THRESHOLD posts, then one probe per backoff whatever its backlog; a probe acknowledged sends the backlog at once", async () => {
    let down = true;
    const posted: string[] = [];
    const notices: DeliveryNotice[] = [];
    const post: Post = async (_url, body) => (posted.push((JSON.parse(body) as { payment_id: string }).payment_id), { status: down ? 503 : 200, error: null });
    const { clock, engine, webhooks, state } = await setup(post, { onNotice: (n) => notices.push(n) });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await payment(engine));
    await webhooks.feed.catchUp();
    await until(async () => (await clock.advance(0), posted.length === BREAKER_THRESHOLD && (await state())?.breaker?.failures === BREAKER_THRESHOLD), 5_000, "the breaker open");
    expect(notices.map((n) => n.change)).toEqual(["opened"]);
    // one at a time, the payment due longest first: five different payments
    expect(new Set(posted).size).toBe(BREAKER_THRESHOLD);
    // the probe's backoff (1 s with this jitter: 750 ms) has not passed: nothing posted, whatever is due
    await clock.advance(500);
    expect(posted.length).toBe(BREAKER_THRESHOLD);
    await clock.advance(250);
    await until(async () => (await clock.advance(0), posted.length === BREAKER_THRESHOLD + 1), 5_000, "the first probe");
    for (let i = 0; i < 3; i++) await clock.advance(100);
    expect(posted.length).toBe(BREAKER_THRESHOLD + 1);
    down = false;
    await until(async () => (await clock.advance(100), ids.every((id) => posted.includes(id)) && posted.length >= BREAKER_THRESHOLD + 1 + ids.length), 5_000, "the backlog after the probe");
    // each payment's event acknowledged once: the 5 failures, the failed probe, then 8 posts
    expect(posted.length).toBe(BREAKER_THRESHOLD + 1 + ids.length);
    expect(notices.map((n) => n.change)).toEqual(["opened", "closed"]);
    expect((await state())?.breaker).toMatchObject({ failures: 0, since: null });
    expect((await webhooks.listEndpoints(ACCOUNT))[0]?.status).toBe("enabled");
  });

  it("an endpoint with no delivery state (its read models rebuilt) resumes at the retry horizon, not at its creation: older events are not posted again", async () => {
    const clock = manualClock();
    const engine = createEngine({ clock });
    await engine.openAccount({ external_account_id: ACCOUNT });
    const posted: string[] = [];
    const post: Post = async (_url, body) => (posted.push((JSON.parse(body) as { payment_id: string }).payment_id), { status: 200, error: null });
    const webhooks = createWebhooks({ engine, outbound: LOCAL, post, random: () => 0.5, backoff: { baseMs: 1_000, maxMs: 1_000, horizonMs: 60_000 } });
    open.push(() => webhooks.delivery.stop(), () => engine.close());
    await webhooks.createEndpoint({ external_account_id: ACCOUNT, url: "http://127.0.0.1:9/hooks" });
    const old = await payment(engine);
    await clock.advance(120_000); // twice the horizon: that payment's events were posted, or given up on, long ago
    const young = await Promise.all([payment(engine), payment(engine)]);
    await webhooks.feed.catchUp();
    await webhooks.delivery.start(); // no state: what a rebuild of the read models leaves
    await until(() => posted.length >= 2);
    for (let i = 0; i < 5; i++) await clock.advance(1_000);
    expect(new Set(posted)).toEqual(new Set(young));
    expect(posted).not.toContain(old);
  });
});
