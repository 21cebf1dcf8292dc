// The typed client (cardflow/client) against the real server over HTTP: every call of the
// README's walk-through, typed errors, the Idempotency-Key reused by a call's own retries,
// retries on no answer / 409 idempotency_key_in_use / 503, and waitForPayment (spec §8).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ApiError, ConnectionError, createClient, WaitTimeout, type Client } from "../../src/client/index.js";
import { startApi, type Api } from "../http/harness.js";

let api: Api;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

/** A fetch that records each try (its Idempotency-Key and the status answered) before the real one. */
function recordingFetch(tries: Array<{ key: string | null; status: number | "no answer" }>, inject?: (n: number) => Response | "drop" | undefined) {
  return async (url: string | URL | Request, init?: RequestInit) => {
    const key = new Headers(init?.headers).get("idempotency-key");
    const injected = inject?.(tries.length);
    if (injected instanceof Response) {
      tries.push({ key, status: injected.status });
      return injected;
    }
    const response = await fetch(url, init);
    if (injected === "drop") {
      // the server acted, but its answer is lost on the way back
      tries.push({ key, status: "no answer" });
      throw new TypeError("fetch failed: socket hang up");
    }
    tries.push({ key, status: response.status });
    return response;
  };
}

async function merchantClient(account: string, options: Partial<Parameters<typeof createClient>[0]> = {}): Promise<Client> {
  const { key } = await api.merchant(account);
  return createClient({ baseUrl: api.base, apiKey: key, retryDelayMs: 10, ...options });
}

describe("the typed client", () => {
  it("runs the walk-through: terminal, intent, auth, the shopper's card, waitForPayment, capture, refund", async () => {
    const client = await merchantClient("acct_walk");
    const terminal = await client.registerTerminal({ external_account_id: "acct_walk", terminal_type: "A_async" });
    const intent = await client.createIntent(
      { external_account_id: "acct_walk", amount: "25.00", payment_method_types: "card_present", capture_method: "manual", external_payment_id: "order-1001" },
      { idempotencyKey: "order-1001" },
    );
    expect(intent).toMatchObject({ status: "requires_payment_method", external_transaction_id: "order-1001" });
    const pending = await client.authorize({ external_account_id: "acct_walk", payment_id: intent.payment_id, terminal_id: terminal.terminal_id });
    expect(pending.status).toBe("payment_method_requested");

    const waiting = client.waitForPayment({ external_account_id: "acct_walk", payment_id: intent.payment_id, intervalMs: 500 });
    setTimeout(() => void client.sandbox.presentCard({ external_account_id: "acct_walk", terminal_id: terminal.terminal_id, card_number: "4242424242424242" }), 700);
    const authorized = await waiting;
    expect(authorized).toMatchObject({ status: "requires_capture", amount_capturable: "25.00", terminal_id: terminal.terminal_id });

    const captured = await client.capture({ external_account_id: "acct_walk", payment_id: intent.payment_id, amount: 25 });
    expect(captured).toMatchObject({ status: "succeeded", amount_captured: "25.00", amount_refundable: "25.00" });
    const refunded = await client.refund({ external_account_id: "acct_walk", payment_id: intent.payment_id, amount: "5.00" });
    expect(refunded.amount_refunded).toBe("5.00");
    expect((await client.listTerminals({ external_account_id: "acct_walk" })).data.map((t) => t.terminal_id)).toEqual([terminal.terminal_id]);
    expect((await client.health()).status).toBe("ok");
  });

  it("throws typed errors carrying status, code, param and request_id", async () => {
    const client = await merchantClient("acct_errors");
    const intent = await client.createIntent({ external_account_id: "acct_errors", amount: "12.50", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
    await client.authorize({ external_account_id: "acct_errors", payment_id: intent.payment_id });
    const tooPrecise = await client.capture({ external_account_id: "acct_errors", payment_id: intent.payment_id, amount: "1.001" }).catch((e: unknown) => e);
    expect(tooPrecise).toBeInstanceOf(ApiError);
    expect(tooPrecise).toMatchObject({ status: 400, param: "amount", code: "amount_invalid", detail: "amount: has more than 2 decimal places, the minor units of USD" });
    expect((tooPrecise as ApiError).request_id).toBeGreaterThan(0);

    const refund = await client.refund({ external_account_id: "acct_errors", payment_id: intent.payment_id }).catch((e: unknown) => e);
    expect(refund).toMatchObject({ status: 409, current_status: "requires_capture", allowed_next_steps: expect.arrayContaining(["capture", "cancel"]) });

    const other = await merchantClient("acct_other");
    const hidden = await other.getPayment({ external_account_id: "acct_other", payment_id: intent.payment_id }).catch((e: unknown) => e);
    expect(hidden).toMatchObject({ name: "ApiError", status: 404, code: "resource_missing", param: "payment_id" });
    const wrongKey = createClient({ baseUrl: api.base, apiKey: "sk_wrong" });
    await expect(wrongKey.listTerminals({ external_account_id: "acct_errors" })).rejects.toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("a call's retries reuse its Idempotency-Key: an answer lost after the server acted does not act twice", async () => {
    const tries: Array<{ key: string | null; status: number | "no answer" }> = [];
    const client = await merchantClient("acct_lost", { fetch: recordingFetch(tries, (n) => (n === 0 ? "drop" : undefined)) });
    const intent = await client.createIntent({ external_account_id: "acct_lost", amount: "3.00", payment_method_types: "card", capture_method: "automatic" });
    expect(tries.map((t) => t.status)).toEqual(["no answer", 200]);
    expect(tries[0]!.key).toMatch(/^[0-9a-f]{32}$/);
    expect(tries[1]!.key).toBe(tries[0]!.key);
    const { data } = await client.listPayments({ external_account_id: "acct_lost" });
    expect(data.map((p) => p.payment_id)).toEqual([intent.payment_id]); // one intent, not two
    expect((await client.listPayments({ external_account_id: "acct_lost", q: "null" })).data).toEqual([]); // no external id is not the text "null"

    // another call gets another key
    await client.createIntent({ external_account_id: "acct_lost", amount: "4.00", payment_method_types: "card", capture_method: "automatic" });
    expect(tries[2]!.key).not.toBe(tries[0]!.key);
  });

  it("retries 409 idempotency_key_in_use while its first try still runs, then gets the first answer", async () => {
    const m = await api.merchant("acct_inuse");
    const terminal = await m.terminal("A_sync");
    const tries: Array<{ key: string | null; status: number | "no answer" }> = [];
    const client = createClient({ baseUrl: api.base, apiKey: m.key, retryDelayMs: 20, maxRetries: 20, fetch: recordingFetch(tries) });
    const intent = await client.createIntent({ external_account_id: "acct_inuse", amount: "8.00", payment_method_types: "card_present", capture_method: "manual" });
    const body = { external_account_id: "acct_inuse", payment_id: intent.payment_id, terminal_id: terminal };
    const first = client.authorize(body, { idempotencyKey: "auth-1" }); // blocks: synchronous terminal
    await api.simulators.terminal.untilCollecting(terminal);
    const retried = client.authorize(body, { idempotencyKey: "auth-1" });
    // the server's Retry-After (1 s) paces the retries
    await vi.waitFor(() => expect(tries.filter((t) => t.status === 409).length).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
    await api.simulators.terminal.presentCard(terminal);
    const [a, b] = await Promise.all([first, retried]);
    expect(a.status).toBe("requires_capture");
    expect(b).toEqual(a);
  });

  it("retries 503 (honouring Retry-After) and gives up on no answer with a ConnectionError", async () => {
    const tries: Array<{ key: string | null; status: number | "no answer" }> = [];
    const unavailable = () => new Response(JSON.stringify({ type: "urn:cardflow:problem:unavailable", title: "Service Unavailable", status: 503, detail: "the store is unreachable", code: "service_unavailable", param: null, request_id: 1 }), { status: 503, headers: { "content-type": "application/problem+json", "retry-after": "0" } });
    const client = await merchantClient("acct_503", { fetch: recordingFetch(tries, (n) => (n < 2 ? unavailable() : undefined)) });
    const terminal = await client.registerTerminal({ external_account_id: "acct_503", terminal_type: "A_async" });
    expect(tries.map((t) => t.status)).toEqual([503, 503, 200]);
    expect(new Set(tries.map((t) => t.key)).size).toBe(1);
    expect(terminal.terminal_id).toBeTruthy();

    const alwaysDown = await merchantClient("acct_503b", { maxRetries: 1, fetch: recordingFetch([], () => unavailable()) });
    await expect(alwaysDown.listTerminals({ external_account_id: "acct_503b" })).rejects.toMatchObject({ status: 503, code: "service_unavailable" });

    const nowhere = createClient({ baseUrl: "http://127.0.0.1:9", apiKey: "k", maxRetries: 2, retryDelayMs: 5 });
    const error = await nowhere.health().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(/after 3 tries/);
  });

  it("says at once, sending nothing, what no request can carry: a header character fetch refuses, an id of dots", async () => {
    let sent = 0;
    const counting = async () => (sent++, Response.json({}));
    expect(() => createClient({ baseUrl: "http://cardflow.test", apiKey: "sk_ключ", fetch: counting })).toThrow(/apiKey: holds a character an HTTP header cannot carry/);
    const client = createClient({ baseUrl: "http://cardflow.test", apiKey: "k", fetch: counting, retryDelayMs: 5 });
    for (const key of ["ключ", "a\nb"]) {
      const error = await client.createIntent({ external_account_id: "a", amount: "5.00", currency: "USD", payment_method_types: "card" } as never, { idempotencyKey: key }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(/^idempotencyKey: holds a character an HTTP header cannot carry .*nothing was sent$/);
    }
    // a URL reads "." and ".." as steps between folders: the request would reach another resource
    for (const call of [
      () => client.getPayment({ external_account_id: "a", payment_id: ".." }),
      () => client.paymentAsOf({ external_account_id: "a", payment_id: ".", timestamp: "2026-01-01T00:00:00Z" }),
      () => client.revokeApiKey({ external_account_id: "a", key_id: ".." }),
      () => client.retryWebhookDelivery({ external_account_id: "a", endpoint_id: "we_1", event_id: ".." }),
    ]) {
      await expect(call()).rejects.toThrow(/^the id "\.{1,2}" cannot be sent in a request's path .*nothing was sent$/);
    }
    expect(sent).toBe(0);
    // a dot inside an id is an id like any other
    await client.getPayment({ external_account_id: "a", payment_id: "pi_.x" });
    expect(sent).toBe(1);
  });

  it("saveCard (through /v1: spec §4.7 has no /v2 route) says a refusal in /v2's words, as every other call: succeeded, not success", async () => {
    const refusal = { type: "urn:cardflow:problem:payment_intent_unexpected_state", title: "Conflict", status: 409, code: "payment_intent_unexpected_state", param: null, request_id: 7, detail: "payment pi_1 in status success does not allow save_card", current_status: "success", allowed_next_steps: ["refund"] };
    const client = createClient({ baseUrl: "http://cardflow.test", apiKey: "k", fetch: async () => Response.json(refusal, { status: 409 }) });
    const error = await client.saveCard({ external_account_id: "a", payment_id: "pi_1", external_customer_id: "cus_1" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 409, current_status: "succeeded", detail: "payment pi_1 in status succeeded does not allow save_card", allowed_next_steps: ["refund"], request_id: 7 });
  });

  it("keeps the path of its base URL: a server behind a gateway's prefix", async () => {
    const { key } = await api.merchant("acct_prefix");
    const paths: string[] = [];
    // the gateway serves cardflow under /cardflow/ and nothing else
    const gateway = async (url: string | URL | Request, init?: RequestInit) => {
      const { pathname, search } = new URL(String(url));
      paths.push(pathname);
      if (!pathname.startsWith("/cardflow/")) return new Response("no such route", { status: 404 });
      return fetch(`${api.base}${pathname.slice("/cardflow".length)}${search}`, init);
    };
    // the base's own query or fragment is not the API's
    for (const baseUrl of [`${api.base}/cardflow`, `${api.base}/cardflow/`, `${api.base}/cardflow?x=1`, `${api.base}/cardflow#f`]) {
      const client = createClient({ baseUrl, apiKey: key, fetch: gateway });
      const terminal = await client.registerTerminal({ external_account_id: "acct_prefix", terminal_type: "A_async" });
      expect((await client.listTerminals({ external_account_id: "acct_prefix" })).data.map((t) => t.terminal_id)).toContain(terminal.terminal_id);
    }
    expect(paths.length).toBe(8);
    expect(paths.every((p) => p.startsWith("/cardflow/v2/"))).toBe(true);
  });

  it("a listed payment is its status read's record, written out again after each change (a page's records are written once per stored document)", async () => {
    const client = await merchantClient("acct_listed");
    const created = { external_account_id: "acct_listed", payment_method_types: "card" as const, capture_method: "manual" as const, payment_method_id: "pm_card_visa", external_customer_id: "cus_listed" };
    const ids = [(await client.createIntent({ ...created, amount: "5.00" })).payment_id, (await client.createIntent({ ...created, amount: "6.00", external_payment_id: 7 })).payment_id];
    const listedAsRead = async () => {
      const { data } = await client.listPayments({ external_account_id: "acct_listed" });
      expect(data).toEqual(await Promise.all([...ids].reverse().map((payment_id) => client.getPayment({ external_account_id: "acct_listed", payment_id }))));
      return data.map((p) => [p.status, p.amount_captured, p.amount_refunded]);
    };
    expect(await listedAsRead()).toEqual([["requires_payment_method", "0.00", "0.00"], ["requires_payment_method", "0.00", "0.00"]]);
    expect(await listedAsRead()).toEqual([["requires_payment_method", "0.00", "0.00"], ["requires_payment_method", "0.00", "0.00"]]); // read again: the same
    await client.authorize({ external_account_id: "acct_listed", payment_id: ids[0]! });
    expect(await listedAsRead()).toEqual([["requires_payment_method", "0.00", "0.00"], ["requires_capture", "0.00", "0.00"]]);
    await client.capture({ external_account_id: "acct_listed", payment_id: ids[0]!, amount: "5.00" });
    await client.refund({ external_account_id: "acct_listed", payment_id: ids[0]!, amount: "1.50" });
    expect(await listedAsRead()).toEqual([["requires_payment_method", "0.00", "0.00"], ["succeeded", "5.00", "1.50"]]);
  });

  it("lists, filters and pages payments; audits one, draws its path, reads it as of a moment", async () => {
    const client = await merchantClient("acct_hist");
    const ids: string[] = [];
    for (const amount of ["1.00", "2.00", "3.00"]) {
      await api.clock.advance(1_000);
      ids.push((await client.createIntent({ external_account_id: "acct_hist", amount, payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_h", external_payment_id: `ord-${amount}` })).payment_id);
    }
    await api.clock.advance(1_000);
    const before = new Date(api.clock.now()).toISOString();
    await api.clock.advance(1_000);
    await client.authorize({ external_account_id: "acct_hist", payment_id: ids[0]! });

    const page1 = await client.listPayments({ external_account_id: "acct_hist", limit: 2 });
    expect(page1.data.map((p) => p.payment_id)).toEqual([ids[2], ids[1]]);
    expect(page1.has_more).toBe(true);
    const page2 = await client.listPayments({ external_account_id: "acct_hist", limit: 2, starting_after: ids[1]! });
    expect(page2).toMatchObject({ data: [{ payment_id: ids[0] }], has_more: false });
    expect((await client.listPayments({ external_account_id: "acct_hist", status: "requires_capture" })).data.map((p) => p.payment_id)).toEqual([ids[0]]);
    expect((await client.listPayments({ external_account_id: "acct_hist", q: "ord-2.00" })).data.map((p) => p.payment_id)).toEqual([ids[1]]);
    expect((await client.listPayments({ external_account_id: "acct_hist", q: ids[2]! })).data.map((p) => p.amount)).toEqual(["3.00"]);
    // a search by the start of a reference: in the references' order, paged by its own cursor (a list's is refused)
    const started = await client.listPayments({ external_account_id: "acct_hist", q: "ord-", limit: 2 });
    expect([started.data.map((p) => p.external_transaction_id), started.has_more]).toEqual([["ord-1.00", "ord-2.00"], true]);
    const rest = await client.listPayments({ external_account_id: "acct_hist", q: "ord-", limit: 2, cursor: started.next_cursor! });
    expect([rest.data.map((p) => p.external_transaction_id), rest.has_more]).toEqual([["ord-3.00"], false]);
    expect((await client.listPayments({ external_account_id: "acct_hist", q: "ord-", starting_after: ids[1]! })).data.map((p) => p.payment_id)).toEqual([ids[2]]);
    await expect(client.listPayments({ external_account_id: "acct_hist", cursor: started.next_cursor! })).rejects.toMatchObject({ status: 400, param: "cursor" });
    await expect(client.listPayments({ external_account_id: "acct_hist", q: "ord-", starting_after: ids[0]!.slice(0, -1) + "?" })).rejects.toMatchObject({ status: 404 });
    // the start of an id; a short q is matched whole ("or" is no reference's start here)
    expect((await client.listPayments({ external_account_id: "acct_hist", q: ids[1]!.slice(0, -2) })).data.map((p) => p.payment_id)).toContain(ids[1]);
    expect((await client.listPayments({ external_account_id: "acct_hist", q: "or" })).data).toEqual([]);
    expect((await client.listPayments({ external_account_id: "acct_hist", q: "ORD-" })).data).toEqual([]); // case-sensitive
    const elsewhere = await merchantClient("acct_hist_other");
    expect((await elsewhere.listPayments({ external_account_id: "acct_hist_other" })).data).toEqual([]);
    // cursors are sealed and the account's: they name no payment, and another account's or an edited one is refused
    const cursor = page1.next_cursor!;
    expect(Buffer.from(cursor.replace(/^pl_/, ""), "base64url").toString("latin1")).not.toContain(ids[1]!.slice(3));
    await expect(elsewhere.listPayments({ external_account_id: "acct_hist_other", cursor })).rejects.toMatchObject({ status: 400, param: "cursor" });
    const edited = cursor.slice(0, -2) + (cursor.at(-2) === "A" ? "B" : "A") + cursor.slice(-1); // another character than the one it replaces
    await expect(client.listPayments({ external_account_id: "acct_hist", cursor: edited })).rejects.toMatchObject({ status: 400, param: "cursor" });
    expect((await client.listPayments({ external_account_id: "acct_hist", limit: 2, cursor })).data.map((p) => p.payment_id)).toEqual([ids[0]]);

    const audit = await client.auditPayment({ external_account_id: "acct_hist", payment_id: ids[0]! });
    expect(audit).toMatchObject({ chain: "intact", read_models: "equal", findings: [], record: { status: "requires_capture" } });
    expect(audit.timeline.map((r) => [r.type, r.status_after])).toEqual([
      ["PaymentIntentCreated", "requires_payment_method"],
      ["AuthorizationAttempted", "requires_payment_method"],
      ["PaymentAuthorized", "requires_capture"],
    ]);
    expect(audit.timeline[2]!.actor).toMatch(/^key_/);

    const { diagram } = await client.paymentDiagram({ external_account_id: "acct_hist", payment_id: ids[0]!, format: "mermaid" });
    expect(diagram).toMatch(/requires_payment_method --> requires_capture : 3\. PaymentAuthorized/);
    expect((await client.paymentDiagram({ external_account_id: "acct_hist", payment_id: ids[0]! })).diagram).toMatch(/^<svg|<\?xml/);

    const earlier = await client.paymentAsOf({ external_account_id: "acct_hist", payment_id: ids[0]!, timestamp: before });
    expect(earlier).toMatchObject({ record: { status: "requires_payment_method" }, revision: 0 });
    const none = await client.paymentAsOf({ external_account_id: "acct_hist", payment_id: ids[0]!, timestamp: "2000-01-01T00:00:00Z" });
    expect(none).toMatchObject({ record: null, revision: null });
    await expect(elsewhere.auditPayment({ external_account_id: "acct_hist_other", payment_id: ids[0]! })).rejects.toMatchObject({ status: 404 });
    await expect(client.paymentAsOf({ external_account_id: "acct_hist", payment_id: ids[0]!, timestamp: "yesterday" })).rejects.toMatchObject({ status: 400, param: "timestamp" });
  });
});

describe("waitForPayment", () => {
  afterEach(() => vi.useRealTimers());

  it("keeps to spec §8: polls every 0.5–1 s, 3 minutes by default; a shorter wait when asked", async () => {
    vi.useFakeTimers();
    const client = createClient({ baseUrl: api.base, apiKey: "k" });
    await expect(client.waitForPayment({ external_account_id: "a", payment_id: "pi_1", intervalMs: 200 })).rejects.toThrow(RangeError);
    await expect(client.waitForPayment({ external_account_id: "a", payment_id: "pi_1", timeoutMs: 0 })).rejects.toThrow(RangeError);

    const reads: number[] = [];
    const start = Date.now();
    const stillWaiting = createClient({
      baseUrl: "http://cardflow.test",
      apiKey: "k",
      fetch: async () => (reads.push(Date.now() - start), Response.json({ payment_id: "pi_1", status: "payment_method_requested" })),
    });
    // the default: 3 minutes
    const byDefault = stillWaiting.waitForPayment({ external_account_id: "a", payment_id: "pi_1" }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(179_000);
    expect(reads.length).toBe(180); // still waiting at 179 s
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await byDefault).toBeInstanceOf(WaitTimeout);
    // 2.5 s when asked: reads at 0, 1, 2 and a last one at the deadline
    reads.length = 0;
    const at = Date.now() - start;
    const short = stillWaiting.waitForPayment({ external_account_id: "a", payment_id: "pi_1", timeoutMs: 2_500 }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(2_500);
    expect(await short).toMatchObject({ name: "WaitTimeout", message: "payment pi_1 is still payment_method_requested after 2500 ms" });
    expect(reads.map((t) => t - at)).toEqual([0, 1_000, 2_000, 2_500]);
  });

  it("stops, by default, at a status spec §3 stops polling at: capture_requested too; `until` waits on", async () => {
    vi.useFakeTimers();
    const answering = (statuses: string[]) => {
      const reads: string[] = [];
      const fetch = async () => {
        const status = statuses[Math.min(reads.length, statuses.length - 1)]!;
        reads.push(status);
        return Response.json({ payment_id: "pi_1", status });
      };
      return { reads, client: createClient({ baseUrl: "http://cardflow.test", apiKey: "k", fetch }) };
    };
    const requested = answering(["payment_method_requested", "capture_requested", "succeeded"]);
    const stopped = requested.client.waitForPayment({ external_account_id: "a", payment_id: "pi_1" });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await stopped).toMatchObject({ status: "capture_requested" });
    expect(requested.reads).toEqual(["payment_method_requested", "capture_requested"]);

    const settled = answering(["payment_method_requested", "capture_requested", "capture_requested", "succeeded"]);
    const waitedOn = settled.client.waitForPayment({ external_account_id: "a", payment_id: "pi_1", until: ["succeeded"] });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await waitedOn).toMatchObject({ status: "succeeded" });
    expect(settled.reads).toHaveLength(4);
  });

  it("gives up with WaitTimeout after timeoutMs, and stops when its signal aborts", async () => {
    vi.useFakeTimers();
    let reads = 0;
    const stillWaiting = async () => {
      reads++;
      return Response.json({ payment_id: "pi_1", status: "payment_method_requested" });
    };
    const client = createClient({ baseUrl: "http://cardflow.test", apiKey: "k", fetch: stillWaiting });
    const waiting = client.waitForPayment({ external_account_id: "a", payment_id: "pi_1", intervalMs: 1000, timeoutMs: 180_000 }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(181_000);
    const error = await waiting;
    expect(error).toBeInstanceOf(WaitTimeout);
    expect(error).toMatchObject({ payment_id: "pi_1", last_status: "payment_method_requested" });
    expect(reads).toBe(181); // one read a second, from 0 s to 180 s

    const abort = new AbortController();
    const aborted = client.waitForPayment({ external_account_id: "a", payment_id: "pi_1" }, { signal: abort.signal }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(2_500);
    abort.abort(new Error("the clerk closed the page"));
    expect(await aborted).toMatchObject({ message: "the clerk closed the page" });
  });
});
