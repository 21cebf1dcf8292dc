// Hardening of the HTTP server (src/http/hardening.ts): security headers on every answer, 431 and
// 414 (a request line too long) as problem+json, an HTTP/1.1 request without Host as problem+json,
// Authorization or Idempotency-Key sent twice refused naming the header (after 2,001 other headers
// too), slow clients cut off by the header and request timeouts while a blocking auth longer than
// those still answers, an error answered before the body arrived closing its connection, and 429
// after repeated failed authentication.
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { expectProblem, startApi, type Api } from "./harness.js";

let api: Api;
afterEach(async () => {
  await api.close();
});

/** Writes `chunks` to a raw connection, `gapMs` apart; resolves with all it read until the server closed it. */
function rawExchange(base: string, chunks: string[], gapMs = 0): Promise<{ text: string; closedAfterMs: number }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(Number(port), hostname);
    let text = "";
    let timer: NodeJS.Timeout | undefined;
    socket.on("data", (d) => (text += d.toString()));
    socket.on("error", () => undefined); // a reset after the answer: the close below still resolves
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ text, closedAfterMs: Date.now() - started });
    });
    let i = 0;
    const next = () => {
      if (i >= chunks.length || socket.destroyed) return;
      socket.write(chunks[i++]!);
      timer = setTimeout(next, gapMs);
    };
    socket.on("connect", next);
    setTimeout(() => reject(new Error(`connection still open after 20 s; read: ${text}`)), 20_000).unref();
  });
}

const problemIn = (text: string) => JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));

describe("HTTP hardening", () => {
  it("every answer carries Cache-Control: no-store and X-Content-Type-Options: nosniff", async () => {
    api = await startApi();
    const m = await api.merchant("acct_h");
    const answers = [
      await api.request("GET", "/healthz"),
      await m.post("/v2/payment/intent", { amount: "1.00", payment_method_types: "card", capture_method: "manual" }),
      await api.request("GET", "/nowhere"),
      await api.request("POST", "/v2/payment/intent", { raw: "{not json", key: m.key }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 404, 400]);
    for (const a of answers) expect([a.headers.get("cache-control"), a.headers.get("x-content-type-options")]).toEqual(["no-store", "nosniff"]);
    // a probe with a cache-buster: still live and ready (a 400 would read the process as down)
    for (const probe of ["/healthz?ts=1", "/readyz?ts=1&x=2"]) expect((await api.request("GET", probe)).status, probe).toBe(200);
  });

  it("headers larger than the server accepts: 431 problem+json", async () => {
    api = await startApi();
    const { text } = await rawExchange(api.base, [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`]);
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
    expect(text).toMatch(/content-type: application\/problem\+json/i);
    expect(text).toMatch(/cache-control: no-store/i);
    expect(problemIn(text)).toMatchObject({ status: 431, code: "headers_too_large", type: "urn:cardflow:problem:headers_too_large" });
  });

  it("a request line longer than the server accepts: 414 problem+json naming the URL, not 431", async () => {
    api = await startApi();
    const { text } = await rawExchange(api.base, [`GET /healthz?q=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`]);
    expect(text).toMatch(/^HTTP\/1\.1 414 /);
    expect(text).toMatch(/content-type: application\/problem\+json/i);
    expect(problemIn(text)).toMatchObject({ status: 414, code: "uri_too_long", detail: "the request's URL is longer than this API accepts" });
    // pipelined after another request in the same packet, too (the request line is the one the parser stopped in)
    const pipelined = await rawExchange(api.base, [`GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz?q=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`]);
    expect(pipelined.text.match(/HTTP\/1\.1 4\d\d /g)).toEqual(["HTTP/1.1 414 "]);
  });

  it("an HTTP/1.1 request without Host: 400 problem+json naming the header, with its Request-Id; HTTP/1.0 without Host is served", async () => {
    api = await startApi();
    const { text } = await rawExchange(api.base, ["GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n"]);
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text).toMatch(/content-type: application\/problem\+json/i);
    const body = problemIn(text);
    expect(body).toMatchObject({ status: 400, code: "host_header_missing", param: "Host", detail: "Host: an HTTP/1.1 request must send a Host header" });
    expect(text).toMatch(new RegExp(`\r\nrequest-id: ${body.request_id}\r\n`, "i"));
    const old = await rawExchange(api.base, ["GET /healthz HTTP/1.0\r\n\r\n"]);
    expect(old.text).toMatch(/^HTTP\/1\.1 200 /);
    // on an unknown path or a wrong method too: the headers are refused before any route is looked for
    for (const line of ["GET /v2/nope HTTP/1.1", "DELETE /v2/hardware HTTP/1.1"]) {
      const { text: unrouted } = await rawExchange(api.base, [`${line}\r\nConnection: close\r\n\r\n`]);
      expect(problemIn(unrouted), line).toMatchObject({ status: 400, code: "host_header_missing" });
    }
  });

  it("Authorization, Idempotency-Key or Content-Type sent twice: 400 header_duplicated naming the header, in either order, nothing appended", async () => {
    api = await startApi();
    const m = await api.merchant("acct_h");
    const exchange = async (headers: string[]) => {
      const body = JSON.stringify({ external_account_id: "acct_h", terminal_type: "A_sync" });
      const head = ["POST /v2/hardware HTTP/1.1", "Host: x", "Connection: close", "Content-Type: application/json", `Content-Length: ${body.length}`, ...headers];
      const { text } = await rawExchange(api.base, [`${head.join("\r\n")}\r\n\r\n${body}`]);
      return { status: Number(text.slice(9, 12)), body: problemIn(text) };
    };
    const valid = `Authorization: Bearer ${m.key}`;
    // Content-Type: Node keeps the first one; a second text/plain after it was accepted
    for (const headers of [[valid, "Authorization: Bearer garbage"], ["authorization: Bearer garbage", valid], [valid, "Idempotency-Key: k1", "idempotency-key: k2"], [valid, "content-type: text/plain"]]) {
      const last = headers.at(-1)!.toLowerCase();
      const header = last.startsWith("idempotency") ? "Idempotency-Key" : last.startsWith("content-type") ? "Content-Type" : "Authorization";
      expect(await exchange(headers), headers.join(" | ")).toMatchObject({ status: 400, body: { code: "header_duplicated", param: header, detail: `${header}: sent twice; send the header once` } });
    }
    expect((await exchange([valid, "Idempotency-Key: k1"])).status).toBe(200);
    // on an unknown path too (it answered 404 once a body error there gave way to the route's absence)
    const { text } = await rawExchange(api.base, [`GET /v2/nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${valid}\r\n${valid}\r\n\r\n`]);
    expect(problemIn(text)).toMatchObject({ status: 400, code: "header_duplicated", param: "Authorization" });
    expect((await m.get("/v2/hardware?external_account_id=acct_h")).body.data).toHaveLength(1);
  });

  it("a header sent twice after 2,001 others is still refused (Node dropped headers past its count unseen); too large in all: 431", async () => {
    api = await startApi();
    const m = await api.merchant("acct_h");
    const body = JSON.stringify({ external_account_id: "acct_h", terminal_type: "A_sync" });
    const request = (fillers: number, last: string) => {
      const filler = Array.from({ length: fillers }, (_, i) => `X${i}: a`);
      const head = ["POST /v2/hardware HTTP/1.1", "Host: x", "Connection: close", "Content-Type: application/json", `Content-Length: ${body.length}`, `Authorization: Bearer ${m.key}`, "Idempotency-Key: k1", ...filler, last];
      return rawExchange(api.base, [`${head.join("\r\n")}\r\n\r\n${body}`]);
    };
    for (const last of ["Idempotency-Key: k2", "Authorization: Bearer sk_other"]) {
      const { text } = await request(2_001, last);
      expect(text, last).toMatch(/^HTTP\/1\.1 400 /);
      expect(problemIn(text), last).toMatchObject({ code: "header_duplicated", param: last.split(":")[0] });
    }
    expect((await request(2_001, "X-Last: a")).text).toMatch(/^HTTP\/1\.1 200 /);
    // no count limit, but the size limit still holds
    expect((await request(5_000, "X-Last: a")).text).toMatch(/^HTTP\/1\.1 431 /);
    expect((await m.get("/v2/hardware?external_account_id=acct_h")).body.data).toHaveLength(1);
  });

  it("CONNECT: 405 problem+json, logged, its connection closed (Node closed it unanswered); a client gone first harms nothing", async () => {
    const log: string[] = [];
    api = await startApi({ log });
    const tunnel = await rawExchange(api.base, ["CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n"]);
    expect(tunnel.text).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    expect(tunnel.text).toMatch(/content-type: application\/problem\+json/i);
    expect(tunnel.text).toMatch(/cache-control: no-store/i);
    expect(tunnel.text).toMatch(/\r\nallow: \r\n/i); // the target (a host and port) allows no method here
    const problem = problemIn(tunnel.text);
    expect(problem).toMatchObject({ status: 405, code: "method_not_allowed", detail: "CONNECT is not allowed: this server is an API, not a proxy" });
    expect(tunnel.text).toMatch(new RegExp(`\r\nrequest-id: ${problem.request_id}\r\n`, "i"));
    // a path the API serves: its methods, as any other method not allowed there
    const path = await rawExchange(api.base, ["CONNECT /v2/hardware HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"]);
    expect(path.text.match(/HTTP\/1\.1 \d{3} /g)).toEqual(["HTTP/1.1 405 "]);
    expect(path.text).toMatch(/\r\nallow: GET, HEAD, POST\r\n/i);
    expect(problemIn(path.text)).toMatchObject({ status: 405, code: "method_not_allowed", detail: "CONNECT is not allowed on /v2/hardware; use GET or HEAD or POST" });
    const logged = log.map((l) => JSON.parse(l)).filter((l) => l.method === "CONNECT");
    expect(logged.map((l) => [l.status, l.route, l.outcome])).toEqual([[405, "unmatched", null], [405, "unmatched", null]]);
    // a client that resets its connection at once: the server goes on
    const { hostname, port } = new URL(api.base);
    const gone = connect(Number(port), hostname, () => gone.write("CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: x\r\n\r\n", () => gone.resetAndDestroy()));
    await new Promise((resolve) => gone.on("close", resolve));
    expect((await api.request("GET", "/healthz")).status).toBe(200);
  });

  it("a client sending its body a byte at a time, or nothing at all, is cut off with 408", async () => {
    api = await startApi({ server: { timeouts: { headersMs: 300, requestMs: 600, checkIntervalMs: 50 } } });
    // a route authorised by its body (client_secret): the server must read the body to answer
    const head = `POST /v2/sdk/payment-method HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
    const [slowBody, silent] = await Promise.all([
      rawExchange(api.base, [head, ...Array.from({ length: 1000 }, () => " ")], 50),
      rawExchange(api.base, []),
    ]);
    for (const { text, closedAfterMs } of [slowBody, silent]) {
      expect(text).toMatch(/^HTTP\/1\.1 408 /);
      expect(problemIn(text)).toMatchObject({ status: 408, code: "request_timeout" });
      expect(closedAfterMs).toBeLessThan(10_000);
    }
  });

  it("an error answered before the body arrived closes the connection: one request, one answer", async () => {
    api = await startApi({ server: { timeouts: { headersMs: 500, requestMs: 1_000, checkIntervalMs: 50 } } });
    // no API key, and a body shorter than its Content-Length: 401 at once, then nothing more (a 408
    // for the same request, once the request timeout passed, was a second answer)
    const head = `POST /v2/hardware HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"terminal_type":`;
    const { text, closedAfterMs } = await rawExchange(api.base, [head]);
    expect(text.match(/HTTP\/1\.1 \d{3} /g)).toEqual(["HTTP/1.1 401 "]);
    expect(text).toMatch(/\r\nconnection: close\r\n/i);
    expect(problemIn(text)).toMatchObject({ status: 401, code: "unauthorized" });
    expect(closedAfterMs).toBeLessThan(1_000);
  });

  it("a blocking auth that answers after the request timeout still answers", async () => {
    api = await startApi({ server: { timeouts: { headersMs: 200, requestMs: 300, checkIntervalMs: 50 } } });
    const m = await api.merchant("acct_h");
    const terminal = await m.terminal("A_sync");
    const { body } = await m.post("/v1/payment/intent", { amount: "5.00", payment_method_types: "card_present", capture_method: "manual" });
    const blocking = m.post("/v1/payment/auth", { payment_id: body.payment_id, terminal_id: terminal });
    await api.simulators.terminal.untilCollecting(terminal);
    await new Promise((r) => setTimeout(r, 1_000)); // well past both timeouts
    await m.post("/sim/terminal/present-card", { terminal_id: terminal });
    const answer = await blocking;
    expect([answer.status, answer.body.status]).toEqual([200, "requires_capture"]);
  });

  it("repeated failed authentication from one client: 429 with Retry-After; a valid key still works", async () => {
    api = await startApi({ server: { authFailures: { max: 3, windowMs: 60_000 } } });
    const m = await api.merchant("acct_h");
    const wrong = () => api.request("GET", "/v2/hardware?external_account_id=acct_h", { key: "sk_wrong" });
    for (let i = 0; i < 3; i++) expectProblem(await wrong(), 401, "unauthorized");
    const limited = await wrong();
    expectProblem(limited, 429, "too_many_failed_authentications");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expectProblem(await api.request("GET", "/v2/hardware?external_account_id=acct_h"), 429, "too_many_failed_authentications");
    expect((await m.get("/v2/hardware?external_account_id=acct_h")).status).toBe(200);
  });

  it("client secrets missing or wrong count too (the SDK's calls, a card saved from a client); a valid secret still works", async () => {
    api = await startApi({ server: { authFailures: { max: 3, windowMs: 60_000 } } });
    const b = await api.merchant("acct_hb", "B");
    const { body: intent } = await b.post("/v2/payment/intent", { amount: "4.00", payment_method_types: "card", capture_method: "manual", allow_saving_card: true });
    const guess = (i: number) => api.request("POST", "/v2/sdk/process-payment", { body: { client_secret: `${intent.payment_id}_secret_guess${i}` } });
    expectProblem(await guess(1), 401, "unauthorized", "client_secret");
    // no credential at all on the save, and a wrong secret there
    const save = (fields: Record<string, unknown>) => api.request("POST", "/v1/customer/card", { body: { external_account_id: "acct_hb", payment_id: intent.payment_id, external_customer_id: "c", ...fields } });
    expectProblem(await save({}), 401, "unauthorized");
    expectProblem(await save({ client_secret: `${intent.payment_id}_secret_guess` }), 401, "unauthorized");
    expectProblem(await guess(2), 429, "too_many_failed_authentications");
    expectProblem(await save({}), 429, "too_many_failed_authentications");
    expect((await api.request("POST", "/v2/sdk/payment-method", { body: { client_secret: intent.client_secret } })).status).toBe(200);
    expect((await save({ client_secret: intent.client_secret })).status).toBe(200);
  });

  it("behind a trusted proxy, failures count per X-Forwarded-For client, not per balancer", async () => {
    api = await startApi({ server: { authFailures: { max: 2, windowMs: 60_000 }, trustProxy: true } });
    const from = (client: string) => api.request("GET", "/v2/hardware?external_account_id=acct_h", { key: "sk_wrong", headers: { "x-forwarded-for": client } });
    for (let i = 0; i < 2; i++) expectProblem(await from("203.0.113.1"), 401, "unauthorized");
    expectProblem(await from("203.0.113.1"), 429, "too_many_failed_authentications");
    expectProblem(await from("203.0.113.2"), 401, "unauthorized");
  });

  it("refuses amounts above the upper bound, a numeric external_payment_id beyond 2^53 - 1 or with a fraction, and a reference it cannot keep exactly; keeps the largest exact one", async () => {
    api = await startApi();
    const m = await api.merchant("acct_h");
    const intent = { payment_method_types: "card", capture_method: "manual" };
    const tooMuch = expectProblem(await m.post("/v2/payment/intent", { ...intent, amount: "10000000000.00" }), 400, "amount_invalid", "amount");
    expect(tooMuch.detail).toContain("at most 9999999999.99 USD");
    expect((await m.post("/v2/payment/intent", { ...intent, amount: "9999999999.99" })).status).toBe(200);
    const raw = (id: string) => `{"external_account_id":"acct_h","amount":"1.00","payment_method_types":"card","capture_method":"manual","external_payment_id":${id}}`;
    // and fractions: 12345678.123456789 parses as 12345678.12345679, 100.10 as 100.1 (send such references as strings)
    for (const id of ["9007199254740993", "9007199254740992", "1e300", "12345678.123456789", "100.10", "1.5", '" order-1"', '"a\\u0000b"']) {
      const res = await api.request("POST", "/v2/payment/intent", { key: m.key, raw: raw(id) });
      expect([res.status, res.body.param]).toEqual([400, "external_payment_id"]);
    }
    const exact = await api.request("POST", "/v2/payment/intent", { key: m.key, raw: raw("9007199254740991") });
    expect(exact.status).toBe(200);
    const stored = (await api.store.readAll()).filter((e) => e.type === "PaymentIntentCreated");
    expect(stored).toHaveLength(2);
    expect(JSON.stringify(stored[1]!.data)).toContain("9007199254740991");
  });
});

describe("a connection its parser's error answered", () => {
  it("runs no request found on it afterwards: a process frozen past the timeout answered 408, then ran the request waiting unread (a payment behind a 408)", async () => {
    api = await startApi();
    const { key } = await api.merchant("acct_frozen");
    const count = async () => (await api.request("GET", "/v2/payments?external_account_id=acct_frozen", { key })).body.data.length as number;
    const { hostname, port } = new URL(api.base);
    // the server's side of the next connection: its timeout check fires first, as after a freeze
    const accepted = new Promise<import("node:net").Socket>((resolve) => api.app.server.once("connection", resolve));
    const client = connect(Number(port), hostname);
    const server = await accepted;
    let text = "";
    client.on("data", (d) => (text += d.toString()));
    client.on("error", () => undefined);
    const closed = new Promise((resolve) => client.on("close", resolve));
    api.app.server.emit("clientError", Object.assign(new Error("Request timeout"), { code: "ERR_HTTP_REQUEST_TIMEOUT" }), server);
    // then the request's bytes are read
    const body = JSON.stringify({ external_account_id: "acct_frozen", amount: "5.00", payment_method_types: "card", capture_method: "manual" });
    client.write(`POST /v2/payment/intent HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    await closed;
    expect(text.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
    expect(text.match(/HTTP\/1\.1/g)).toHaveLength(1); // its one answer
    expect(await count()).toBe(0); // and nothing was done
  });
});

describe("Expect: 100-continue", () => {
  /** Sends the headers, then the body only once the server said 100 Continue: all it read, and whether it asked for the body. */
  function expecting(base: string, headers: string, body: string): Promise<{ text: string; asked: boolean }> {
    const { hostname, port } = new URL(base);
    return new Promise((resolve) => {
      const socket = connect(Number(port), hostname);
      let text = "";
      let asked = false;
      socket.on("data", (d) => {
        text += d.toString();
        if (!asked && text.startsWith("HTTP/1.1 100 Continue\r\n\r\n")) {
          asked = true;
          socket.write(body);
        }
        if (/\r\n\r\n[\s\S]*\}$/.test(text.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, ""))) socket.end();
      });
      socket.on("error", () => undefined);
      socket.on("close", () => resolve({ text: text.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, ""), asked }));
      socket.on("connect", () => socket.write(headers));
    });
  }

  it("is answered 100 only for a body that will be read: a request refused on its headers gets its refusal, the body never asked for", async () => {
    api = await startApi();
    const { key } = await api.merchant("acct_continue");
    const body = JSON.stringify({ external_account_id: "acct_continue", amount: "5.00", payment_method_types: "card", capture_method: "manual" });
    const head = (auth: string, length: number) => `POST /v2/payment/intent HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${auth}Content-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

    const noKey = await expecting(api.base, head("", body.length), body);
    expect([noKey.asked, noKey.text.split("\r\n")[0]]).toEqual([false, "HTTP/1.1 401 Unauthorized"]);
    const tooLarge = await expecting(api.base, head(`Authorization: Bearer ${key}\r\n`, 10_000_000), body);
    expect([tooLarge.asked, tooLarge.text.split("\r\n")[0]]).toEqual([false, "HTTP/1.1 413 Payload Too Large"]);
    const fine = await expecting(api.base, head(`Authorization: Bearer ${key}\r\n`, body.length), body);
    expect([fine.asked, fine.text.split("\r\n")[0]]).toEqual([true, "HTTP/1.1 200 OK"]);
  });

  it("any other expectation: 417 problem+json naming Expect, nothing done; 100-continue (in any case) still continues; HTTP/1.0 ignores it", async () => {
    api = await startApi();
    const { key } = await api.merchant("acct_expect");
    const body = JSON.stringify({ external_account_id: "acct_expect", amount: "5.00", payment_method_types: "card", capture_method: "manual" });
    const head = (expectation: string, version = "1.1") => `POST /v2/payment/intent HTTP/${version}\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: ${expectation}\r\n\r\n`;
    for (const expectation of ["foo", "continue", "200-ok"]) {
      const { text } = await rawExchange(api.base, [head(expectation) + body]);
      expect(text, expectation).toMatch(/^HTTP\/1\.1 417 Expectation Failed\r\n/);
      expect(text).toMatch(/content-type: application\/problem\+json/i);
      expect(text).toMatch(/cache-control: no-store/i);
      const problem = problemIn(text);
      expect(problem).toMatchObject({ status: 417, code: "expectation_failed", param: "Expect", type: "urn:cardflow:problem:expectation_failed", detail: "Expect: only 100-continue is supported; send the request without Expect, or with Expect: 100-continue" });
      expect(text).toMatch(new RegExp(`\r\nrequest-id: ${problem.request_id}\r\n`, "i"));
    }
    const continued = await expecting(api.base, head("100-Continue"), body);
    expect([continued.asked, continued.text.split("\r\n")[0]]).toEqual([true, "HTTP/1.1 200 OK"]);
    // HTTP/1.0 has no Expect (RFC 9110 §10.1.1: ignored), as Node ignores it
    const { text: old } = await rawExchange(api.base, [head("foo", "1.0") + body]);
    expect(old).toMatch(/^HTTP\/1\.1 200 /);
    expect((await api.request("GET", "/v2/payments?external_account_id=acct_expect", { key })).body.data).toHaveLength(2);
  });
});
