// The observability of a real `npm start` process: its Prometheus endpoint on METRICS_PORT (not
// on the API's port) scraped before and after traffic, every figure the issue names moving with it
// and no label naming an account, a payment or a key; its spans exported over OTLP/HTTP to a
// receiver on loopback; its log lines (LOG_LEVEL=debug) saying request id, account, payment id,
// command, outcome and latency, and holding no key, secret or card number; a request Node's HTTP
// parser refused (431) warned of and counted, none of its bytes logged; a metrics port that is
// taken, or the API's, refused at start.
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshStores, merchantKey, startServer, type ServerProcess, type StoreEnv } from "../multiprocess/servers.js";
import { freePort } from "../support/postgres.js";
import { SERVER_NODE_ARGS } from "../support/server-args.js";

const stores = await freshStores("served");
const SIGNING_KEY = "5e".repeat(32);

/** The samples of a metric whose labels include `labels`, summed (0 when none). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) total += Number(match[3]);
  }
  return total;
}
const has = (text: string, name: string) => text.split("\n").some((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));

/** A tiny OTLP/HTTP receiver: keeps every body POSTed to /v1/traces. */
function otlpReceiver() {
  const bodies: any[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      if (req.url === "/v1/traces" && req.method === "POST") bodies.push({ contentType: req.headers["content-type"], json: JSON.parse(body) });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  return { bodies, server };
}

let server: ServerProcess;
let receiver: ReturnType<typeof otlpReceiver>;
let metricsPort: number;
let store: StoreEnv;
let key: string;
let keyB: string;
const scrape = () => fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
/** A header too large for Node's parser (431, answered before fastify), holding a marker: the status line. */
const PARSER_MARKER = "parserrefusedmarker";
function oversizedHeaders(): Promise<string> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${PARSER_MARKER.repeat(1_200)}\r\n\r\n`));
    let text = "";
    socket.on("data", (d: Buffer) => (text += d.toString()));
    socket.on("error", () => undefined);
    socket.on("close", () => resolve(text.split("\r\n")[0]!));
  });
}

beforeAll(async () => {
  receiver = otlpReceiver();
  await new Promise<void>((resolve) => receiver.server.listen(0, "127.0.0.1", resolve));
  const otlp = `http://127.0.0.1:${(receiver.server.address() as { port: number }).port}`;
  store = stores.sqlite();
  key = await merchantKey(store, "acct_obs");
  keyB = await merchantKey(store, "acct_obsb", "B");
  metricsPort = await freePort();
  server = await startServer(store, {
    METRICS_PORT: String(metricsPort),
    LOG_LEVEL: "debug",
    WEBHOOK_SIGNING_KEY: SIGNING_KEY,
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "200",
  });
}, 180_000);
afterAll(async () => {
  await server?.stop();
  receiver?.server.close();
});

const post = (path: string, body: object, headers: Record<string, string> = {}, as = { key: () => key, account: "acct_obs" }) =>
  fetch(server.url + path, { method: "POST", headers: { authorization: `Bearer ${as.key()}`, "content-type": "application/json", ...headers }, body: JSON.stringify({ external_account_id: as.account, ...body }) }).then(async (r) => ({ status: r.status, body: await r.json() }));

describe("a served process", () => {
  const seen: { payment: string; clientSecret: string; endpointSecret: string } = { payment: "", clientSecret: "", endpointSecret: "" };

  it("metrics on METRICS_PORT move with traffic, with no account, payment or key in any label; none on the API's port", async () => {
    const before = await scrape();
    expect(has(before, "nodejs_eventloop_lag_seconds")).toBe(true);
    expect(has(before, "process_resident_memory_bytes")).toBe(true);
    expect(has(before, "nodejs_gc_duration_seconds_count")).toBe(true);

    // an endpoint whose receiver (port 9) refuses: the payment's events wait for it
    const endpoint = await post("/v2/webhook_endpoints", { url: "http://127.0.0.1:9/hooks" });
    expect(endpoint.status).toBe(200);
    seen.endpointSecret = endpoint.body.secret;
    const intent = { amount: "12.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_obs" };
    const created = await post("/v2/payment/intent", intent, { "idempotency-key": "obs-1" });
    expect(created.status).toBe(200);
    seen.payment = created.body.payment_id;
    expect((await post("/v2/payment/intent", intent, { "idempotency-key": "obs-1" })).status).toBe(200); // replayed
    expect((await post("/v2/payment/intent", { ...intent, amount: "13.00" }, { "idempotency-key": "obs-1" })).status).toBe(422); // reused
    expect((await post("/v2/payment/auth", { payment_id: seen.payment })).status).toBe(200);
    expect((await post("/v2/payment/capture", { payment_id: seen.payment, amount: "12.00" })).status).toBe(200);
    expect((await post("/v2/payment/capture", { payment_id: seen.payment, amount: "12.00" })).status).toBe(409);
    for (let i = 0; i < 22; i++) await fetch(`${server.url}/v2/account`, { headers: { authorization: "Bearer sk_not_a_key_obs" } });
    // processor B's client SDK: a card number in a request body
    const asB = { key: () => keyB, account: "acct_obsb" };
    const sdkIntent = await post("/v2/payment/intent", { amount: "3.00", payment_method_types: "card", capture_method: "manual" }, {}, asB);
    seen.clientSecret = sdkIntent.body.client_secret;
    const collected = await fetch(`${server.url}/v2/sdk/payment-method`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_secret: seen.clientSecret, card_number: "5555555555554444" }) });
    expect(collected.status).toBe(200);
    expect((await fetch(`${server.url}/v2/payment/intent/${seen.payment}?external_account_id=acct_obs`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect(await oversizedHeaders()).toBe("HTTP/1.1 431 Request Header Fields Too Large");

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(moved("cardflow_http_requests_total", { route: "/v2/payment/intent", method: "POST", status: "200" })).toBe(3);
    expect(moved("cardflow_http_requests_total", { route: "/v2/payment/intent/:payment_id", method: "GET", status: "200" })).toBe(1);
    expect(moved("cardflow_http_request_duration_seconds_count", { route: "/v2/payment/capture", method: "POST" })).toBe(2);
    expect(moved("cardflow_commands_total", { command: "createIntent", outcome: "ok" })).toBe(2);
    expect(moved("cardflow_commands_total", { command: "capture", outcome: "ok" })).toBe(1);
    expect(moved("cardflow_commands_total", { command: "capture", outcome: "payment_intent_unexpected_state" })).toBe(1);
    expect(moved("cardflow_commands_total", { command: "collectPaymentMethod", outcome: "ok" })).toBe(1);
    expect(moved("cardflow_command_duration_seconds_count", { command: "authorize" })).toBe(1);
    expect(moved("cardflow_processor_calls_total", { processor: "A", call: "chargeStoredCard", outcome: "authorized" })).toBe(1);
    expect(moved("cardflow_processor_calls_total", { processor: "A", call: "capture", outcome: "captured" })).toBe(1);
    expect(moved("cardflow_processor_calls_total", { processor: "B", call: "readCardFromClient", outcome: "ok" })).toBe(1);
    expect(moved("cardflow_processor_call_duration_seconds_count", { processor: "A", call: "capture" })).toBe(1);
    expect(moved("cardflow_store_append_duration_seconds_count")).toBeGreaterThanOrEqual(6);
    expect(moved("cardflow_store_append_batch_size_sum")).toBeGreaterThanOrEqual(6);
    expect(moved("cardflow_idempotency_replays_total")).toBe(1);
    expect(moved("cardflow_idempotency_conflicts_total", { reason: "reused" })).toBe(1);
    expect(moved("cardflow_rate_limit_refusals_total", { route: "/v2/account" })).toBeGreaterThanOrEqual(1);
    // answered by Node's parser: no route, so counted apart from the requests
    expect(moved("cardflow_http_client_errors_total", { status: "431" })).toBe(1);
    expect(moved("cardflow_http_requests_total", { status: "431" })).toBe(0);
    expect(moved("cardflow_http_requests_total", { route: "/v2/account", status: "401" })).toBeGreaterThanOrEqual(20);
    expect(sample(after, "cardflow_reconciler_passes_total", { outcome: "ok" })).toBeGreaterThanOrEqual(1);
    for (const gauge of ["cardflow_read_model_lag_events", "cardflow_read_model_lag_seconds", "cardflow_webhook_deliveries_pending", "cardflow_webhook_deliveries_failing", "cardflow_webhook_endpoints_failing", "cardflow_reconciler_open_attempts", "cardflow_reconciler_oldest_open_attempt_seconds", "cardflow_http_requests_in_flight", "cardflow_shutting_down"]) {
      expect(has(after, gauge), gauge).toBe(true);
    }
    // the endpoint's events wait, pending, and fail
    for (let i = 0; i < 50 && sample(await scrape(), "cardflow_webhook_deliveries_pending") === 0; i++) await new Promise((r) => setTimeout(r, 200));
    expect(sample(await scrape(), "cardflow_webhook_deliveries_pending")).toBeGreaterThan(0);
    for (let i = 0; i < 50 && sample(await scrape(), "cardflow_webhook_deliveries_failing") === 0; i++) await new Promise((r) => setTimeout(r, 200));
    expect(sample(await scrape(), "cardflow_webhook_deliveries_failing")).toBe(1);

    for (const secret of ["acct_obs", seen.payment, key, keyB, "cus_obs"]) expect(after).not.toContain(secret);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
  });

  it("spans go to the OTLP/HTTP endpoint: the requests and their commands, service cardflow", async () => {
    const names = () => receiver.bodies.flatMap((b) => b.json.resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans.map((span: any) => span.name))));
    for (let i = 0; i < 100 && !names().includes("cardflow.command.capture"); i++) await new Promise((r) => setTimeout(r, 100));
    expect(names()).toEqual(expect.arrayContaining(["POST /v2/payment/intent", "cardflow.command.createIntent", "cardflow.command.capture", "cardflow.store.append", "cardflow.processor.chargeStoredCard"]));
    const resource = receiver.bodies[0].json.resourceSpans[0].resource.attributes;
    expect(resource).toContainEqual({ key: "service.name", value: { stringValue: "cardflow" } });
    const exported = JSON.stringify(receiver.bodies);
    for (const secret of [key, keyB, seen.clientSecret, seen.endpointSecret, "5555555555554444"]) expect(exported).not.toContain(secret);
  });

  it("one log line per request: request id, account, payment id, command, outcome, latency; no key, secret or card number anywhere in the log", async () => {
    // a card number where a payment id goes (even unauthenticated), and a path no route serves
    await fetch(`${server.url}/v2/payment/intent/4111-1111-1111-1111?external_account_id=acct_obs`);
    // and in a valid command's body (the command names the payment it was given: 404)
    const captureCard = await fetch(`${server.url}/v2/payment/capture`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ external_account_id: "acct_obs", payment_id: "4000056655665556", amount: "1.00" }) });
    expect(captureCard.status).toBe(404);
    await fetch(`${server.url}/v2/no/such/route`, { headers: { authorization: `Bearer ${key}` } });
    // a client secret, or the API key itself, pasted where a payment id goes
    expect((await fetch(`${server.url}/v2/payment/intent/${seen.clientSecret}?external_account_id=acct_obs`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(404);
    expect((await fetch(`${server.url}/v2/payment/intent/${key}?external_account_id=acct_obs`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(404);
    await expect.poll(() => server.output(), { timeout: 10_000 }).toContain('"payment_id":"sk_[removed]"');
    await expect.poll(() => server.output(), { timeout: 10_000 }).toContain('_secret_[removed]"');
    await expect.poll(() => server.output(), { timeout: 10_000 }).toContain('"route":"unmatched"');
    await expect.poll(() => server.output(), { timeout: 10_000 }).toContain('"payment_id":"[digits removed]"');
    await expect.poll(() => server.output().split('"route":"/v2/payment/capture"').length - 1, { timeout: 10_000 }).toBe(3);
    const lines = server.output().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    const capture = lines.filter((l) => l.msg === "request" && l.route === "/v2/payment/capture");
    expect(capture).toHaveLength(3);
    expect(capture[2]).toMatchObject({ status: 404, payment_id: "[digits removed]", command: "capture" });
    expect(capture[0]).toMatchObject({ level: 30, account: "acct_obs", method: "POST", status: 200, payment_id: seen.payment, command: "capture", outcome: "ok" });
    expect(capture[1]).toMatchObject({ status: 409, payment_id: seen.payment, command: "capture", outcome: "payment_intent_unexpected_state" });
    expect(Number.isInteger(capture[0].request_id)).toBe(true);
    expect(typeof capture[0].latency_ms).toBe("number");
    const created = lines.find((l) => l.msg === "request" && l.route === "/v2/payment/intent" && l.status === 200);
    expect(created).toMatchObject({ command: "createIntent", payment_id: seen.payment, outcome: "ok" });
    expect(lines.find((l) => l.msg === "request" && l.status === 401)).toMatchObject({ account: null, outcome: "unauthorized" });
    // a command the payment's client secret authorised: the account it acted for, though no key named one
    expect(lines.find((l) => l.msg === "request" && l.route === "/v2/sdk/payment-method")).toMatchObject({ account: "acct_obsb", key_id: null, status: 200, command: "collectPaymentMethod" });
    // a kept answer sent again for its Idempotency-Key: no command ran, the outcome says so
    const createKept = () => fetch(`${server.url}/v2/payment/intent`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": "obs-replay" }, body: JSON.stringify({ external_account_id: "acct_obs", amount: "3.00", payment_method_types: "card_present", capture_method: "manual" }) });
    const kept = await createKept();
    expect(kept.headers.get("idempotent-replayed")).toBe("false");
    const { payment_id: keptPayment } = (await kept.json()) as { payment_id: string };
    expect((await createKept()).headers.get("idempotent-replayed")).toBe("true");
    await expect.poll(() => server.output(), { timeout: 10_000 }).toContain(`"payment_id":"${keptPayment}","command":null,"outcome":"replayed"`);
    const replayed = server.output().split("\n").filter((l) => l.includes('"outcome":"replayed"')).map((l) => JSON.parse(l));
    expect(replayed.at(-1)).toMatchObject({ route: "/v2/payment/intent", status: 200, command: null, account: "acct_obs", payment_id: keptPayment });
    expect(replayed.every((l) => l.command === null)).toBe(true);
    // a request Node's parser refused: a warning with its codes, none of its bytes
    const refused = lines.filter((l) => l.msg === "request refused by the HTTP parser");
    expect(refused).toEqual([{ level: 40, time: expect.any(Number), pid: expect.any(Number), hostname: expect.any(String), request_id: expect.any(Number), status: 431, code: "headers_too_large", error: "HPE_HEADER_OVERFLOW", msg: "request refused by the HTTP parser" }]);
    const log = server.output();
    expect(log).not.toContain(PARSER_MARKER);
    for (const secret of [key, keyB, "sk_not_a_key_obs", SIGNING_KEY, seen.clientSecret, seen.endpointSecret, "5555555555554444", "4111-1111-1111-1111", "4000056655665556"]) expect(log).not.toContain(secret);
  });

  it("a metrics port already taken, or the API's own, is refused at start with a message naming METRICS_PORT", async () => {
    const taken = await startFails({ ...store, METRICS_PORT: String(metricsPort), PORT: String(await freePort()) });
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`METRICS_PORT ${metricsPort} on 127.0.0.1 is already in use`);
    const port = await freePort();
    const same = await startFails({ ...store, METRICS_PORT: String(port), PORT: String(port) });
    expect(same.code).toBe(1);
    expect(same.stderr).toContain("METRICS_PORT: ");
    expect(same.stderr).toContain("is the API's port");
  });
});

function startFails(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [...SERVER_NODE_ARGS, "src/main.ts"], { env: { ...process.env, HOST: "127.0.0.1", LOG_LEVEL: "warn", DATABASE_URL: "", ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stderr })));
}
