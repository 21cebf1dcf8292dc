// Blocking auth on a synchronous terminal over real connections: a client that disconnects does
// not stop the payment; the server gives up at its (configurable) timeout; shutdown lets the
// in-flight request finish. Also: what the request log says and never says.
import { afterEach, describe, expect, it } from "vitest";
import { PaymentRecordOut } from "../../src/http/schemas.js";
import { expectShape, startApi, type Api } from "./harness.js";

let api: Api | undefined;
afterEach(async () => {
  await api?.close().catch(() => undefined);
  api = undefined;
});

const untilCollecting = (a: Api, terminalId: string) => a.simulators.terminal.untilCollecting(terminalId);

describe("blocking auth (/v1, synchronous terminal)", () => {
  it("the client disconnects: the payment still completes and reads back; the request is logged once done, as 499", async () => {
    const log: string[] = [];
    api = await startApi({ log });
    const m = await api.merchant("acct_s");
    const terminal = await m.terminal("A_sync");
    const auths = () => log.map((l) => JSON.parse(l)).filter((l) => l.route === "/v1/payment/auth");
    // the card presented at once (the server sees the connection closed after the answer is
    // done), or once the server has seen it closed (the answer done after)
    for (const [i, seenClosedMs] of [0, 300].entries()) {
      const { body } = await m.post("/v1/payment/intent", { amount: "11.00", payment_method_types: "card_present", capture_method: "automatic" });
      const abort = new AbortController();
      const gone = api.request("POST", "/v1/payment/auth", { key: m.key, body: { external_account_id: "acct_s", payment_id: body.payment_id, terminal_id: terminal }, signal: abort.signal });
      await untilCollecting(api, terminal);
      abort.abort();
      await expect(gone).rejects.toThrow();
      await new Promise((r) => setTimeout(r, seenClosedMs));
      await m.post("/sim/terminal/present-card", { terminal_id: terminal });
      const read = expectShape(PaymentRecordOut("v2"), (await m.read(body.payment_id)).body);
      expect(read).toMatchObject({ status: "succeeded", amount_captured: "11.00" });
      // no answer reached the client: the line says so (nginx's 499)
      await expect.poll(() => auths().length).toBe(i + 1);
      expect(auths()[i]).toMatchObject({ status: 499, payment_id: body.payment_id, account: "acct_s", method: "POST" });
    }
  });

  it("an event stream its client closes: logged once, with the 200 that began it (its answer went out)", async () => {
    const log: string[] = [];
    api = await startApi({ log });
    const m = await api.merchant("acct_stream_log");
    const abort = new AbortController();
    const opened = await fetch(`${api.base}/v2/events/stream?external_account_id=acct_stream_log`, { headers: { authorization: `Bearer ${m.key}` }, signal: abort.signal });
    expect(opened.status).toBe(200);
    await opened.body!.getReader().read(); // its first line
    abort.abort();
    const streams = () => log.map((l) => JSON.parse(l)).filter((l) => l.route === "/v2/events/stream");
    await expect.poll(() => streams().length).toBe(1);
    expect(streams()[0]).toMatchObject({ status: 200, method: "GET", account: "acct_stream_log" });
  });

  it("the server gives up at its timeout: requires_payment_method with USER_TIMEOUT", async () => {
    api = await startApi({ syncAuthTimeoutMs: 30_000 });
    const m = await api.merchant("acct_s");
    const terminal = await m.terminal("A_sync");
    const { body } = await m.post("/v1/payment/intent", { amount: "11.00", payment_method_types: "card_present", capture_method: "manual" });
    const blocking = m.post("/v1/payment/auth", { payment_id: body.payment_id, terminal_id: terminal });
    await untilCollecting(api, terminal);
    await api.clock.advance(30_000);
    const res = await blocking;
    expect(expectShape(PaymentRecordOut("v1"), res.body)).toMatchObject({ status: "requires_payment_method", last_error_code: "USER_TIMEOUT" });
    expect(api.simulators.terminal.collecting(terminal)).toBeUndefined();
  });

  it("shutdown waits for the in-flight auth, refuses new work, then closes", async () => {
    api = await startApi();
    const m = await api.merchant("acct_s");
    const terminal = await m.terminal("A_sync");
    const { body } = await m.post("/v1/payment/intent", { amount: "2.00", payment_method_types: "card_present", capture_method: "manual" });
    const blocking = m.post("/v1/payment/auth", { payment_id: body.payment_id, terminal_id: terminal });
    await untilCollecting(api, terminal);
    let closed = false;
    const closing = api.app.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(closed).toBe(false);
    await api.simulators.terminal.presentCard(terminal);
    const res = await blocking;
    expect(res.body.status).toBe("requires_capture");
    await closing;
    expect(closed).toBe(true);
  });
});

describe("request log", () => {
  it("one line per request with request id, account, route, status, latency; no keys, no card data", async () => {
    const log: string[] = [];
    api = await startApi({ log });
    const m = await api.merchant("acct_log");
    const terminal = await m.terminal("A_async");
    const { body } = await m.post("/v2/payment/intent", { amount: "1.00", payment_method_types: "card_present", capture_method: "manual" });
    await m.post("/v2/payment/auth", { payment_id: body.payment_id, terminal_id: terminal });
    await m.post("/sim/terminal/present-card", { terminal_id: terminal, card_number: "5555555555554444" });
    await api.request("POST", "/v2/payment/intent", { key: "sk_not_a_key_123", body: {} });
    const lines = log.map((l) => JSON.parse(l));
    const created = lines.find((l) => l.route === "/v2/payment/intent" && l.status === 200);
    expect(created).toMatchObject({ msg: "request", account: "acct_log", method: "POST", status: 200 });
    // an integer, as README and spec §2.1 say, equal to the answer's request_id
    expect(created.request_id).toBe(body.request_id);
    expect(Number.isInteger(created.request_id)).toBe(true);
    expect(typeof created.latency_ms).toBe("number");
    expect(lines.find((l) => l.status === 401)).toMatchObject({ account: null, route: "/v2/payment/intent" });
    // a sandbox route naming a terminal: the payment its answer is (README: every line's payment id)
    expect(lines.find((l) => l.route === "/sim/terminal/present-card")).toMatchObject({ status: 200, payment_id: body.payment_id });
    const all = log.join("\n");
    expect(all).not.toContain(m.key);
    expect(all).not.toContain("sk_not_a_key_123");
    expect(all).not.toContain("5555555555554444");
    expect(all).not.toContain(body.client_secret);
  });
});
