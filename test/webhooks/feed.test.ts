// GET /v2/events and /v2/webhook_endpoints over real HTTP: paging with `after` over thousands of
// events equals the full list (no gap, no duplicate), a stored cursor resumes exactly, accounts see
// only their own events, filters by type and payment; endpoints created (secret once), listed,
// deleted; bad input is a 4xx naming the parameter and appends nothing.
import { afterAll, describe, expect, it } from "vitest";
import { EventPageOut } from "../../src/http/routes/events.js";
import { CreatedWebhookEndpointOut, WebhookEndpointOut } from "../../src/http/routes/webhook-endpoints.js";
import { publicEventId } from "../../src/present/public-events.js";
import { expectProblem, expectShape, startApi, type Merchant } from "../http/harness.js";

const api = await startApi();
afterAll(() => api.close());
const a = await api.merchant("acct_feed_a");
const b = await api.merchant("acct_feed_b");
const { engine } = api;

async function storedCard(account: string, authorize: boolean): Promise<string> {
  const { payment_id } = await engine.createIntent({ external_account_id: account, amount: "5.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
  if (authorize) await engine.authorize({ external_account_id: account, payment_id });
  return payment_id;
}
// interleaved accounts: A 1200 payments (every third charged: 1600 events), B 400
for (let i = 0; i < 1600; i++) await storedCard(i % 4 === 3 ? b.account : a.account, i % 3 === 0);

/** Every public event the engine's payment streams of this account imply, by id, in log order. */
async function expectedIds(account: string): Promise<string[]> {
  const owner = new Map<string, string>();
  const ids: string[] = [];
  for (const e of await engine.store.readAll()) {
    if (e.type === "PaymentIntentCreated") owner.set(e.stream, (e.data as { external_account_id: string }).external_account_id);
    if (e.stream.startsWith("payment-") && owner.get(e.stream) === account && (e.type === "PaymentIntentCreated" || e.type === "PaymentCaptured")) ids.push(publicEventId(e.id));
  }
  return ids;
}

const del = (m: Merchant, path: string) => api.request("DELETE", path, { key: m.key });

async function page(m: Merchant, query: string) {
  const res = await m.get(`/v2/events?external_account_id=${m.account}&${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return expectShape(EventPageOut, res.body);
}

async function all(m: Merchant, query: string, limit: number, after = "") {
  const seen = [];
  for (;;) {
    const p = await page(m, `limit=${limit}${after && `&after=${after}`}&${query}`);
    seen.push(...p.data);
    after = p.next_cursor;
    if (!p.has_more) return { events: seen, cursor: after };
    expect(p.data).toHaveLength(limit);
  }
}

describe("GET /v2/events", () => {
  it("paged with `after` equals the full list: oldest first, no gap, no duplicate, only the caller's account", async () => {
    const expected = await expectedIds(a.account);
    expect(expected.length).toBe(1600);
    const { events, cursor } = await all(a, "", 97);
    expect(events.map((e) => e.id)).toEqual(expected);
    expect(events.every((e) => e.external_account_id === a.account)).toBe(true);
    const whole = await page(a, "limit=1000");
    expect(whole.data.map((e) => e.id)).toEqual(expected.slice(0, 1000));
    expect(whole.has_more).toBe(true);
    // B sees its own, none of A's
    const ofB = await all(b, "", 250);
    expect(ofB.events.map((e) => e.id)).toEqual(await expectedIds(b.account));
    // a stored cursor resumes exactly where it stopped: only what happened since
    const later = [await storedCard(a.account, true), await storedCard(b.account, false)];
    const resumed = await all(a, "", 50, cursor);
    expect(resumed.events.map((e) => [e.payment_id, e.type, e.sequence])).toEqual([
      [later[0], "payment_intent.created", 1],
      [later[0], "payment_intent.succeeded", 2],
    ]);
    expect((await page(a, `after=${resumed.cursor}`)).data).toEqual([]);
  });

  it("filters by type and by payment; another account's payment reads as nothing", async () => {
    const succeeded = await all(a, "type=payment_intent.succeeded", 100);
    expect(succeeded.events.length).toBeGreaterThan(300);
    expect(succeeded.events.every((e) => e.type === "payment_intent.succeeded" && e.sequence === 2)).toBe(true);
    const both = await all(a, "type=payment_intent.succeeded,payment_intent.created", 300);
    expect(both.events.map((e) => e.id)).toEqual(await expectedIds(a.account));
    const id = succeeded.events[5]!.payment_id!;
    const one = await page(a, `payment_id=${id}`);
    expect(one.data.map((e) => [e.type, e.sequence])).toEqual([["payment_intent.created", 1], ["payment_intent.succeeded", 2]]);
    expect((one.data[1]!.data.object as { status: string }).status).toBe("succeeded");
    // another account's payment answers as an unknown id does: nothing, and a cursor that has not
    // moved over its events (their positions would tell when that payment moved), after it moves too
    const unknown = await page(b, "payment_id=pi_never_made_0000000");
    expect(unknown).toEqual({ data: [], next_cursor: "0", has_more: false });
    expect(await page(b, `payment_id=${id}`)).toEqual(unknown);
    await engine.refund({ external_account_id: a.account, payment_id: id, amount: "1.00" });
    expect(await page(b, `payment_id=${id}`)).toEqual(unknown);
    // a filtered poller's cursor at the end passes what matched nothing: a type that never happens
    // leaves a cursor past the whole feed (not "0", which would read it all again on every poll)
    const none = await page(a, "type=customer_card.saved");
    expect([none.data, none.has_more, none.next_cursor]).toEqual([[], false, (await all(a, "", 1000)).cursor]);
  });

  it("cursors are opaque and per account: no position in them, another account's or an edited one is a 400 naming after", async () => {
    const first = await page(a, "limit=5");
    const cursor = first.next_cursor;
    expect(cursor).toMatch(/^cur_[\w-]+$/);
    // one position, one cursor; "0" is the beginning, like no cursor
    expect((await page(a, "limit=5")).next_cursor).toBe(cursor);
    expect((await page(a, "limit=5&after=0")).data).toEqual(first.data);
    const edited = cursor.slice(0, -2) + (cursor.endsWith("AA") ? "AB" : "AA");
    for (const bad of [`${b.account}`, "00", "1e16", "10000000000000000", "-1", "evt_1", edited, "cur_", `${cursor}x`]) {
      const problem = expectProblem(await a.get(`/v2/events?external_account_id=${a.account}&after=${encodeURIComponent(bad)}`), 400, "cursor_invalid", "after");
      // advice that holds for the list and the stream alike (the stream without after starts from now on)
      expect(problem.detail).toBe("after: not a cursor of this account's feed; pass a next_cursor this endpoint returned, or 0 for the beginning of the feed");
    }
    // B's own cursor is refused on A's feed (and A's on B's)
    const ofB = await page(b, "limit=2");
    expectProblem(await a.get(`/v2/events?external_account_id=${a.account}&after=${ofB.next_cursor}`), 400, "cursor_invalid", "after");
    expectProblem(await b.get(`/v2/events?external_account_id=${b.account}&after=${cursor}`), 400, "cursor_invalid", "after");
    expectProblem(await a.get(`/v2/events?external_account_id=${a.account}&after=${"x".repeat(201)}`), 400, "parameter_invalid", "after");
  });

  it("a 0.1.0 cursor (digits) reads as the account's last event at or before it: its answers depend on that account's events alone, and none arriving is skipped", async () => {
    const c = await api.merchant("acct_feed_c");
    const stored = await engine.store.readAll();
    const head = stored.at(-1)!.position;
    // C has no event among thousands: any position, inside the log or past its end, answers alike
    // (a refusal past the end told another account how long the log is)
    for (const n of [1, 2, head - 1, head, head + 1, 99999999999]) expect(await page(c, `after=${n}`)).toEqual({ data: [], next_cursor: "0", has_more: false });
    // A: at its last event, or anywhere past it, the answer is A's own cursor at its end
    const end = (await all(a, "", 1000)).cursor;
    const owner = new Map<string, string>();
    for (const e of stored) if (e.type === "PaymentIntentCreated") owner.set(e.stream, (e.data as { external_account_id: string }).external_account_id);
    const lastOfA = stored.filter((e) => owner.get(e.stream) === a.account && (e.type === "PaymentIntentCreated" || e.type === "PaymentCaptured" || e.type === "PaymentRefunded")).at(-1)!.position;
    for (const n of [lastOfA, lastOfA + 1, head, 99999999999]) expect(await page(a, `after=${n}`)).toEqual({ data: [], next_cursor: end, has_more: false });
    expect((await page(a, `after=${lastOfA - 1}`)).data).toHaveLength(1);
    // a poller that held a position past the end goes on from the cursor it was given: it sees C's next
    // events (before, its pages would have stayed empty until the log passed that position)
    const given = (await page(c, "after=99999999999")).next_cursor;
    const next = await storedCard(c.account, true);
    expect((await page(c, `after=${given}`)).data.map((e) => [e.payment_id, e.type])).toEqual([
      [next, "payment_intent.created"],
      [next, "payment_intent.succeeded"],
    ]);
  });

  it("refuses another account, unknown types, bad limits, with the parameter named", async () => {
    expectProblem(await a.get(`/v2/events?external_account_id=${b.account}`), 403, "account_forbidden", "external_account_id");
    expectProblem(await a.get(`/v2/events?external_account_id=${a.account}&type=payment_intent.exploded`), 400, "parameter_invalid", "type");
    expectProblem(await a.get(`/v2/events?external_account_id=${a.account}&limit=0`), 400, "parameter_invalid", "limit");
    expectProblem(await a.get(`/v2/events?external_account_id=${a.account}&limit=0`), 400, "parameter_invalid", "limit");
    expectProblem(await a.get(`/v2/events?external_account_id=${a.account}&limit=1001`), 400, "parameter_invalid", "limit");
    expect((await api.request("GET", `/v2/events?external_account_id=${a.account}`)).status).toBe(401);
  });
});

describe("/v2/webhook_endpoints", () => {
  it("creates (secret shown once), lists, deletes; stored as events without the secret", async () => {
    const created = await a.post("/v2/webhook_endpoints", { url: "https://example.com/hooks", event_types: ["payment_intent.succeeded"] });
    expect(created.status).toBe(200);
    const endpoint = expectShape(CreatedWebhookEndpointOut, created.body);
    expect(endpoint).toMatchObject({ url: "https://example.com/hooks", event_types: ["payment_intent.succeeded"], status: "enabled" });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const listed = await a.get(`/v2/webhook_endpoints?external_account_id=${a.account}`);
    expect(listed.body.data.map((e: unknown) => expectShape(WebhookEndpointOut, e))).toEqual([{ ...endpoint, secret: undefined }].map(({ secret: _, ...e }) => e));
    expect((await b.get(`/v2/webhook_endpoints?external_account_id=${b.account}`)).body.data).toEqual([]);
    const events = (await engine.store.readStream(`webhook_endpoint-${endpoint.id}`)).map((e) => JSON.stringify(e));
    expect(events.join()).not.toContain(endpoint.secret);

    expectProblem(await del(b, `/v2/webhook_endpoints/${endpoint.id}?external_account_id=${b.account}`), 404, "resource_missing", "endpoint_id");
    const deleted = await del(a, `/v2/webhook_endpoints/${endpoint.id}?external_account_id=${a.account}`);
    expect(deleted.status).toBe(200);
    expect(expectShape(WebhookEndpointOut, deleted.body).status).toBe("deleted");
    expect((await a.get(`/v2/webhook_endpoints?external_account_id=${a.account}`)).body.data).toEqual([]);
    expectProblem(await del(a, `/v2/webhook_endpoints/${endpoint.id}?external_account_id=${a.account}`), 404, "resource_missing", "endpoint_id");
  });

  it("with an Idempotency-Key, a retried create answers the same endpoint and creates no second one", async () => {
    const body = { url: "https://example.com/idem" };
    const first = await a.post("/v2/webhook_endpoints", body, { "Idempotency-Key": "we-1" });
    const again = await a.post("/v2/webhook_endpoints", body, { "Idempotency-Key": "we-1" });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const listed = (await a.get(`/v2/webhook_endpoints?external_account_id=${a.account}`)).body.data;
    expect(listed.filter((e: { url: string }) => e.url === body.url)).toHaveLength(1);
    await del(a, `/v2/webhook_endpoints/${first.body.id}?external_account_id=${a.account}`);
  });

  it("accepts only http(s) URLs and unknown event types are refused; nothing is appended", async () => {
    const before = (await engine.store.readAll()).length;
    expectProblem(await a.post("/v2/webhook_endpoints", { url: "ftp://example.com/x" }), 400, "url_invalid", "url");
    expectProblem(await a.post("/v2/webhook_endpoints", { url: "not a url" }), 400, "url_invalid", "url");
    expectProblem(await a.post("/v2/webhook_endpoints", { url: "https://u:p@example.com/" }), 400, "url_invalid", "url");
    // no host right after scheme:// : WHATWG parsing would take these as https://x/, a host never written there
    for (const url of ["https:///x", "https:/x", "https:x", " https:///x", "https://\t/x"]) {
      const hostless = await a.post("/v2/webhook_endpoints", { url });
      expectProblem(hostless, 400, "url_invalid", "url");
      expect(hostless.body.detail, url).toContain("no host right after https://");
    }
    expectProblem(await a.post("/v2/webhook_endpoints", { url: "https://example.com", event_types: ["payment.exploded"] }), 400, "parameter_invalid", "event_types.0");
    const twice = await a.post("/v2/webhook_endpoints", { url: "https://example.com", event_types: ["terminal.registered", "terminal.registered"] });
    expectProblem(twice, 400, "parameter_invalid", "event_types");
    expect(twice.body.detail).toContain("lists an event type more than once");
    expectProblem(await a.post("/v2/webhook_endpoints", { url: "https://example.com", extra: 1 }), 400, "unknown_parameter", "extra");
    expect((await engine.store.readAll()).length).toBe(before);
    // event_types null, as an endpoint's answer writes "every type": taken back as that
    const every = await a.post("/v2/webhook_endpoints", { url: "https://example.com/every", event_types: null });
    expect(every.status).toBe(200);
    expect(every.body.event_types).toBeNull();
  });
});
