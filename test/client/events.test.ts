// The event feed and webhook endpoints from the typed client: endpoints created, listed and
// deleted; the event stream (GET /v2/events/stream) as an async iterator whose cursors resume
// exactly (nothing missed, nothing repeated, the same events as the paged feed); and a draining
// server: a real `npm start` process stopped with SIGTERM ends its stream with a final event,
// and the iterator carries on from the cursor on another process of the same store.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKeys } from "../../src/api-keys.js";
import { createClient, type Client, type PublicEvent, type StreamItem } from "../../src/client/index.js";
import { startApi, type Api } from "../http/harness.js";
import { lockableReadModels } from "../support/lockable-read-models.js";
import { freshStores, merchantKey, startServer } from "../multiprocess/servers.js";

let api: Api;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api?.close());

/** Takes `count` items from the iterator, then stops it. */
async function take<T>(items: AsyncIterable<T>, count: number): Promise<T[]> {
  const taken: T[] = [];
  if (count === 0) return taken;
  for await (const item of items) if (taken.push(item) === count) break;
  return taken;
}

/** A card payment, created and authorized: 2 public events (created, requires_capture). */
async function payment(client: Client, account: string, amount: string): Promise<string> {
  const intent = await client.createIntent({ external_account_id: account, amount, payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_s" });
  await client.authorize({ external_account_id: account, payment_id: intent.payment_id });
  return intent.payment_id;
}

describe("webhook endpoints from the client", () => {
  it("creates one (its secret shown only then), lists it, deletes it", async () => {
    const { key } = await api.merchant("acct_hooks");
    const client = createClient({ baseUrl: api.base, apiKey: key });
    const account = { external_account_id: "acct_hooks" };
    const created = await client.createWebhookEndpoint({ ...account, url: "https://hooks.example.com/cardflow", event_types: ["payment_intent.succeeded"] });
    expect(created).toMatchObject({ object: "webhook_endpoint", url: "https://hooks.example.com/cardflow", event_types: ["payment_intent.succeeded"], status: "enabled", secret: expect.any(String) });
    const listed = await client.listWebhookEndpoints(account);
    expect(listed.data).toEqual([expect.objectContaining({ id: created.id, status: "enabled" })]);
    expect(listed.data[0]).not.toHaveProperty("secret");
    expect(await client.deleteWebhookEndpoint({ ...account, endpoint_id: created.id })).toMatchObject({ id: created.id, status: "deleted" });
    expect((await client.listWebhookEndpoints(account)).data).toEqual([]);
    await expect(client.deleteWebhookEndpoint({ ...account, endpoint_id: created.id })).rejects.toMatchObject({ status: 404 });
  });
});

describe("the event stream from the client", () => {
  it("ends with event: end (reason unauthorized) once its key is revoked, as the key's requests answer 401; the client's iterator throws the 401", async () => {
    const account = "acct_stream_revoked";
    const m = await api.merchant(account);
    const streamed = await createApiKeys(api.engine).issue(account, "test"); // the key the streams are opened with
    const client = createClient({ baseUrl: api.base, apiKey: streamed.key, retryDelayMs: 10 });
    const raw = await fetch(`${api.base}/v2/events/stream?external_account_id=${account}`, { headers: { authorization: `Bearer ${streamed.key}` } });
    const seen: unknown[] = [];
    const following = (async () => {
      for await (const { event } of client.streamEvents({ external_account_id: account, after: "0" })) seen.push(event.type);
    })();
    await payment(client, account, "1.00");
    await expect.poll(() => seen.length).toBe(2);

    const revoked = await api.request("DELETE", `/v2/api_keys/${streamed.key_id}?external_account_id=${account}`, { key: m.key });
    expect(revoked.status).toBe(200);
    api.clock.advance(1_000); // past the keys' cache: the revocation is read
    await expect(following).rejects.toMatchObject({ status: 401 });
    const text = await raw.text(); // the raw stream has ended
    expect(text).toMatch(/event: end\ndata: \{"reason":"unauthorized","next_cursor":"cur_[^"]+"\}\n\n$/);
    // nothing the revoked key could read was sent after: the payment made now reaches no one
    await api.request("POST", "/v2/payment/intent", { key: m.key, body: { external_account_id: account, amount: "2.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_s" } });
    expect(seen).toEqual(["payment_intent.created", "payment_intent.requires_capture"]);
  });

  it("ends when its signal aborts (README: \"it ends when signal aborts\"), while it waits for an event or for a reconnection", async () => {
    const { key } = await api.merchant("acct_stream_abort");
    const client = createClient({ baseUrl: api.base, apiKey: key, retryDelayMs: 10 });
    const account = { external_account_id: "acct_stream_abort" };
    await payment(client, account.external_account_id, "1.00");
    const stop = new AbortController();
    const seen: string[] = [];
    const ended = (async () => {
      for await (const { event } of client.streamEvents({ ...account, after: "0" }, { signal: stop.signal })) {
        seen.push(event.type);
        if (seen.length === 2) setTimeout(() => stop.abort(new Error("the page closed")), 50); // then it waits for a third
      }
      return "ended";
    })();
    expect(await ended).toBe("ended");
    expect(seen).toEqual(["payment_intent.created", "payment_intent.requires_capture"]);
    // aborted while it waits to connect again (a server that refuses): it ends too
    const down = createClient({ baseUrl: "http://127.0.0.1:9", apiKey: key, retryDelayMs: 50 });
    const again = new AbortController();
    setTimeout(() => again.abort(), 100);
    const items: unknown[] = [];
    for await (const item of down.streamEvents(account, { signal: again.signal })) items.push(item);
    expect(items).toEqual([]);
  });

  it("follows events as they happen; each item's cursor resumes exactly; the same events as the paged feed", async () => {
    const { key } = await api.merchant("acct_stream");
    const client = createClient({ baseUrl: api.base, apiKey: key, retryDelayMs: 10 });
    const account = { external_account_id: "acct_stream" };
    const before = await payment(client, account.external_account_id, "1.00"); // before the stream: not in it

    // from now on: the stream opens with the cursor it starts from (the feed's end), then follows
    const { next_cursor: now } = await client.listEvents(account);
    const opened = await fetch(`${api.base}/v2/events/stream?external_account_id=acct_stream`, { headers: { authorization: `Bearer ${key}` } });
    const reader = opened.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!/\nid: [^\n]+\n\n/.test(text)) text += (await reader.read()).value ?? "";
    expect(text).toBe(`retry: 2000\n\nid: ${now}\n\n`);
    const ids = [await payment(client, account.external_account_id, "2.00"), await payment(client, account.external_account_id, "3.00")];
    while (!text.includes(`"payment_id":"${ids[1]}"`)) text += (await reader.read()).value ?? "";
    expect(text).not.toContain(before);
    await reader.cancel();

    // the iterator from that cursor
    const items = await take(client.streamEvents({ ...account, after: now }), 4);
    expect(items.map((i) => [i.event.payment_id, i.event.type])).toEqual([
      [ids[0], "payment_intent.created"],
      [ids[0], "payment_intent.requires_capture"],
      [ids[1], "payment_intent.created"],
      [ids[1], "payment_intent.requires_capture"],
    ]);
    expect(items.map((i) => i.event.payment_id)).not.toContain(before);

    // from the second item's cursor: the third and fourth again, then one that happens later
    const resumed = take(client.streamEvents({ ...account, after: items[1]!.cursor }), 3);
    await client.capture({ ...account, payment_id: ids[0]!, amount: "2.00" });
    const again: StreamItem<PublicEvent>[] = await resumed;
    expect(again.map((i) => i.event.id)).toEqual([items[2]!.event.id, items[3]!.event.id, expect.any(String)]);
    expect(again[2]!.event).toMatchObject({ type: "payment_intent.succeeded", payment_id: ids[0], sequence: 3 });
    // cursors are opaque and this account's (src/webhooks/cursor.ts)
    expect(again.map((i) => i.cursor)).toEqual([items[2]!.cursor, items[3]!.cursor, expect.stringMatching(/^cur_[\w-]+$/)]);

    // a reconnecting EventSource's Last-Event-ID works as after; one that is not this account's cursor is refused, not ignored (from now on would skip events)
    const withLastEventId = (id: string) => fetch(`${api.base}/v2/events/stream?external_account_id=acct_stream`, { headers: { authorization: `Bearer ${key}`, "last-event-id": id } });
    const resumedByHeader = await withLastEventId(items[1]!.cursor);
    const headerReader = resumedByHeader.body!.pipeThrough(new TextDecoderStream()).getReader();
    let resumedText = "";
    while (!resumedText.includes(items[3]!.event.id)) resumedText += (await headerReader.read()).value ?? "";
    expect(resumedText).toContain(items[2]!.event.id);
    await headerReader.cancel();
    const other = await api.merchant("acct_stream_other");
    const otherClient = createClient({ baseUrl: api.base, apiKey: other.key });
    await payment(otherClient, "acct_stream_other", "1.00");
    const { next_cursor: foreign } = await otherClient.listEvents({ external_account_id: "acct_stream_other" });
    for (const bad of [items[1]!.cursor.slice(0, -2) + (items[1]!.cursor.endsWith("AA") ? "AB" : "AA"), "1e16", foreign]) {
      const refused = await withLastEventId(bad);
      expect([refused.status, ((await refused.json()) as { code: string; param: string }).param]).toEqual([400, "Last-Event-ID"]);
    }

    // the paged feed, from the same cursor, holds the same events
    const page = await client.listEvents({ ...account, after: items[1]!.cursor });
    expect(page.data.map((e) => e.id)).toEqual(again.map((i) => i.event.id));
    expect(page.next_cursor).toBe(again[2]!.cursor);

    // filters: one payment's events, one type
    const filtered = await take(client.streamEvents({ ...account, after: "0", payment_id: ids[1]!, type: "payment_intent.requires_capture" }), 1);
    expect(filtered.map((i) => [i.event.payment_id, i.event.type])).toEqual([[ids[1], "payment_intent.requires_capture"]]);
    // refusals are ApiErrors, not retried
    await expect(take(client.streamEvents({ external_account_id: "acct_someone_else" }), 1)).rejects.toMatchObject({ status: 403, code: "account_forbidden" });
    await expect(take(createClient({ baseUrl: api.base, apiKey: "sk_wrong" }).streamEvents(account), 1)).rejects.toMatchObject({ status: 401 });
    await expect(take(client.streamEvents({ ...account, type: "payment_intent.exploded" }), 1)).rejects.toMatchObject({ status: 400, param: "type" });
  });

  it("a stream from now on starts at once while the read models cannot commit (no catch-up of its own to wait for), then sends what follows", async () => {
    const { readModels, block, unblock } = lockableReadModels();
    const own = await startApi({ readModels });
    try {
      const { key } = await own.merchant("acct_stream_behind");
      const client = createClient({ baseUrl: own.base, apiKey: key });
      block();
      const before = await payment(client, "acct_stream_behind", "1.00"); // not indexed by the feed, and before the stream
      const opened = await fetch(`${own.base}/v2/events/stream?external_account_id=acct_stream_behind`, { headers: { authorization: `Bearer ${key}` } });
      const reader = opened.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      // before: it waited for a full catch-up of the feed, which waits for the blocked commit
      while (!/\nid: [^\n]+\n\n/.test(text)) text += (await reader.read()).value ?? "";
      unblock();
      const after = await payment(client, "acct_stream_behind", "2.00");
      const sent = () => [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as PublicEvent);
      while (sent().length < 2) text += (await reader.read()).value ?? "";
      expect(sent().map((e) => [e.payment_id, e.type])).toEqual([
        [after, "payment_intent.created"],
        [after, "payment_intent.requires_capture"],
      ]);
      expect(text).not.toContain(before);
      await reader.cancel();
    } finally {
      unblock();
      await own.close();
    }
  });

  it("a stream from a 0.1.0 cursor (digits) past the log's end starts at the account's last event: it announces that cursor and sends what follows", async () => {
    const { key } = await api.merchant("acct_stream_digits");
    const client = createClient({ baseUrl: api.base, apiKey: key });
    await payment(client, "acct_stream_digits", "1.00");
    const { next_cursor: end } = await client.listEvents({ external_account_id: "acct_stream_digits" });
    const opened = await fetch(`${api.base}/v2/events/stream?external_account_id=acct_stream_digits&after=99999999999`, { headers: { authorization: `Bearer ${key}` } });
    const reader = opened.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!/\nid: [^\n]+\n\n/.test(text)) text += (await reader.read()).value ?? "";
    // before: it announced that position, sealed, and skipped every event until the log passed it
    expect(text).toBe(`retry: 2000\n\nid: ${end}\n\n`);
    const next = await payment(client, "acct_stream_digits", "2.00");
    while (!text.includes("payment_intent.requires_capture")) text += (await reader.read()).value ?? "";
    expect([...text.matchAll(/^data: (.*)$/gm)].map((m) => (JSON.parse(m[1]!) as PublicEvent).payment_id)).toEqual([next, next]);
    await reader.cancel();
  });

  it("a stream ends with a final event carrying the cursor when its server closes", async () => {
    const own = await startApi();
    try {
      const { key } = await own.merchant("acct_drain");
      const response = await fetch(`${own.base}/v2/events/stream?external_account_id=acct_drain&after=0`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      expect(response.headers.get("cache-control")).toBe("no-store");
      const text = response.text();
      await own.close();
      expect(await text).toMatch(/^retry: 2000\n\nid: 0\n\n(: keep-alive\n\n)*event: end\ndata: \{"reason":"draining","next_cursor":"0"\}\n\n$/);
    } finally {
      await own.close().catch(() => undefined);
    }
  });
});

describe("a draining server process", () => {
  it("SIGTERM ends the stream with its final event; the iterator resumes from the cursor on another process, nothing missed", { timeout: 180_000 }, async () => {
    const stores = await freshStores("event-stream");
    const store = stores.sqlite();
    const key = await merchantKey(store, "acct_sse");
    const [a, b] = [await startServer(store), await startServer(store)];
    try {
      const account = { external_account_id: "acct_sse" };
      const onB = createClient({ baseUrl: b.url, apiKey: key });
      // a payment made on B reaches A's stream (the store tells every process of appends)
      const response = await fetch(`${a.url}/v2/events/stream?external_account_id=acct_sse&after=0`, { headers: { authorization: `Bearer ${key}` } });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let received = "";
      const until = async (pattern: RegExp) => {
        while (!pattern.test(received)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the stream ended before ${pattern}:\n${received}`);
          received += value;
        }
      };
      const first = await payment(onB, account.external_account_id, "5.00");
      await until(/"type":"payment_intent\.requires_capture"/);
      expect(received).toContain(`"payment_id":"${first}"`);

      void a.stop();
      await until(/event: end\ndata: .*\n\n/);
      const end = JSON.parse(/event: end\ndata: (.*)\n\n/.exec(received)![1]!) as { reason: string; next_cursor: string };
      expect(end.reason).toBe("draining");
      expect(await a.exited).toBe(0);

      // meanwhile on B; the iterator, from A's last cursor, on B
      const second = await payment(onB, account.external_account_id, "6.00");
      const rest = await take(onB.streamEvents({ ...account, after: end.next_cursor }), 2);
      expect(rest.map((i) => [i.event.payment_id, i.event.type])).toEqual([
        [second, "payment_intent.created"],
        [second, "payment_intent.requires_capture"],
      ]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
