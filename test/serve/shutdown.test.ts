// Graceful stop of a real `npm start` process (src/serve/shutdown.ts, src/http/drain.ts): SIGTERM
// while 128 clients run payments over keep-alive connections. /readyz fails at once while the
// other requests are still served through the grace; then the listener closes. Every request
// either got an answer or a refused connection: no 5xx, no reset, no connection closed without an
// answer; every answered request's effect is in the store; the process exits 0. And at the
// deadline, a request still running (a blocking terminal auth) is answered 503, not cut (with the
// headers and the log line of every answer), and a server-sent event stream ends with its final
// event. A SIGTERM right after the first /healthz answer, to `npm start` itself, or while the
// process still starts ends it cleanly, exit 0. A SIGINT to npm start's process group (npm
// forwards it: the server gets it twice) keeps the grace.
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { freshStores, merchantKey, startServer, storedEvents, type StoreEnv } from "../multiprocess/servers.js";
import { loadClients, REFUSED } from "./load.js";

const stores = await freshStores("shutdown");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** GET on a connection of its own (a probe, like a load balancer's): the status, or the error code. */
function probe(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)));
    req.end();
  });
}

let stopServers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  await Promise.all(stopServers.map((stop) => stop()));
});

describe("SIGTERM under load", () => {
  it("128 clients: readiness fails at once, requests are served through the grace, none is reset or left unanswered, every answered effect is stored, exit 0", async () => {
    const store: StoreEnv = stores.sqlite();
    const key = await merchantKey(store, "acct_drain");
    // processor calls take 50 ms: some are under way when the listener closes
    const server = await startServer(store, { SHUTDOWN_GRACE_MS: "2000", SHUTDOWN_DEADLINE_MS: "30000", SIM_PROCESSOR_LATENCY_MS: "50", LOG_LEVEL: "info" });
    stopServers.push(() => server.stop());
    const load = loadClients(server.url, key, "acct_drain", 128);
    // every client has run at least one payment: the keep-alive connections are open
    for (let waited = 0; load.outcomes.filter((o) => o.kind === "capture").length < 128 && waited < 120_000; waited += 100) await sleep(100);
    expect(await probe(`${server.url}/readyz`)).toBe(200);

    const signalledAt = Date.now();
    server.child.kill("SIGTERM");
    let notReadyAt = 0;
    const probes: string[] = [];
    for (let i = 0; i < 100 && !notReadyAt; i++) {
      const status = await probe(`${server.url}/readyz`);
      probes.push(`${status}@${Date.now() - signalledAt}`);
      if (status === 503) notReadyAt = Date.now();
      else await sleep(20);
    }
    console.info(`probes after SIGTERM: ${probes.join(" ")} (${Date.now() - signalledAt} ms)`);
    expect(notReadyAt, "readiness failed during the grace").toBeGreaterThan(0);
    expect(await server.exited).toBe(0);
    await load.done;

    const answered = load.outcomes.filter((o) => o.status !== null);
    const failures = load.outcomes.filter((o) => o.error !== null && o.error !== REFUSED);
    console.info(`shutdown under load: ${load.outcomes.length} requests, ${answered.length} answered (${answered.filter((o) => o.at > notReadyAt).length} after readiness failed), ${load.outcomes.length - answered.length - failures.length} refused, ${failures.length} faults`);
    expect(failures.map((o) => `${o.kind}: ${o.error}`)).toEqual([]);
    expect(answered.filter((o) => o.status! >= 500).map((o) => `${o.kind}: ${o.status} ${o.body?.code}`)).toEqual([]);
    expect(answered.every((o) => o.status === 200), "only 200s in this workload").toBe(true);
    // the grace: other requests were still answered after readiness failed
    expect(answered.filter((o) => o.at > notReadyAt).length).toBeGreaterThan(0);
    expect(answered.filter((o) => o.at > signalledAt).length).toBeGreaterThan(0);
    expect(server.output()).toContain('"msg":"stopped"');

    // every answer's effect is stored
    const events = await storedEvents(store);
    const byPayment = new Map<string, string[]>();
    for (const e of events) if (e.stream.startsWith("payment-")) byPayment.set(e.stream.slice(8), [...(byPayment.get(e.stream.slice(8)) ?? []), e.type]);
    const effect = { create: "PaymentIntentCreated", authorize: "PaymentAuthorized", capture: "PaymentCaptured" } as const;
    const missing = answered.filter((o) => !byPayment.get(o.paymentId!)?.includes(effect[o.kind]));
    expect(missing.map((o) => `${o.kind} ${o.paymentId}`)).toEqual([]);
  }, 300_000);

  it("at the deadline a request still running is answered 503 (retry with the same Idempotency-Key), an event stream ends with its final event, and the process exits 0 in time", async () => {
    const store: StoreEnv = stores.sqlite();
    const key = await merchantKey(store, "acct_deadline");
    const server = await startServer(store, { SHUTDOWN_GRACE_MS: "200", SHUTDOWN_DEADLINE_MS: "3000", LOG_LEVEL: "info" });
    stopServers.push(() => server.stop());
    const post = (path: string, body: object, headers: Record<string, string> = {}, to = server) =>
      fetch(to.url + path, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers }, body: JSON.stringify({ external_account_id: "acct_deadline", ...body }) });
    const terminal = (await (await post("/v2/hardware", { terminal_type: "A_sync" })).json()).terminal_id;
    const intent = await (await post("/v1/payment/intent", { amount: "5.00", payment_method_types: "card_present", capture_method: "manual" })).json();
    // a synchronous terminal's auth blocks until a card is presented (up to 120 s)
    const authorize = { payment_id: intent.payment_id, terminal_id: terminal };
    const blocking = post("/v1/payment/auth", authorize, { "idempotency-key": "auth-cut-off" });
    // and a server-sent event stream is open
    const stream = await fetch(`${server.url}/v2/events/stream?external_account_id=acct_deadline`, { headers: { authorization: `Bearer ${key}` } });
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const streamed = stream.text();
    await sleep(500);
    const signalledAt = Date.now();
    server.child.kill("SIGTERM");
    const res = await blocking;
    const body = await res.json();
    expect(res.status).toBe(503);
    expect(body).toMatchObject({ code: "service_stopping", status: 503 });
    expect(res.headers.get("retry-after")).toBe("1");
    // the headers every answer carries, and a log line that says which command it cut
    expect(res.headers.get("request-id")).toBe(String(body.request_id));
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await server.exited).toBe(0);
    const logged = server.output().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l)).filter((l) => l.msg === "request" && l.status === 503);
    expect(logged).toEqual([expect.objectContaining({ request_id: body.request_id, route: "/v1/payment/auth", command: "authorize", payment_id: intent.payment_id, outcome: "service_stopping" })]);
    // the engine's close then ended the auth's wait: no error line for a request answered already
    expect(server.output().split("\n").filter((l) => l.startsWith("{") && JSON.parse(l).level >= 50)).toEqual([]);
    expect(Date.now() - signalledAt).toBeLessThan(3_000 + 2_000);
    // the stream ended with its final event when the listener closed, not cut
    expect(await streamed).toMatch(/event: end\ndata: \{"reason":"draining","next_cursor":"[\w-]+"\}\n\n$/);
    // the attempt was recorded before the call: the reconciler of the next process resolves it
    const events = await storedEvents(store);
    expect(events.filter((e) => e.stream === `payment-${intent.payment_id}`).map((e) => e.type)).toContain("TerminalAuthorizationAttempted");

    // the retry the 503 asked for, on the next process: the shopper has yet to pay, so it waits for
    // the outcome as the first try would have (it answered the collection's start, for good)
    const next = await startServer(store, { LOG_LEVEL: "info" });
    stopServers.push(() => next.stop());
    let retried: Response | undefined;
    const retry = post("/v1/payment/auth", authorize, { "idempotency-key": "auth-cut-off" }, next).then((r) => (retried = r));
    await sleep(1_000);
    expect(retried).toBeUndefined();
    expect((await post("/sim/terminal/present-card", { terminal_id: terminal }, {}, next)).status).toBe(200);
    await retry;
    expect([retried!.status, (await retried!.json()).status]).toEqual([200, "requires_capture"]);
    const again = await post("/v1/payment/auth", authorize, { "idempotency-key": "auth-cut-off" }, next);
    expect([again.headers.get("idempotent-replayed"), (await again.json()).status]).toEqual(["true", "requires_capture"]);
  }, 180_000);
});

describe("a webhook receiver slower than the stop's deadline", () => {
  it("its post in flight is left as a crash leaves it (its endpoint's next holder posts it again): the stop ends in time, exit 0, no error line", async () => {
    const store: StoreEnv = stores.sqlite();
    const key = await merchantKey(store, "acct_slowhook");
    // a receiver that takes every post and never answers (within WEBHOOK_TIMEOUT_MS, 10 s by default)
    const posted: string[] = [];
    const receiver = createServer((req) => void req.on("data", () => undefined).on("end", () => posted.push(String(req.headers["cardflow-event-id"]))));
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    stopServers.push(async () => void receiver.closeAllConnections());
    stopServers.push(() => new Promise((resolve) => receiver.close(resolve)));
    const server = await startServer(store, { SHUTDOWN_GRACE_MS: "200", SHUTDOWN_DEADLINE_MS: "3000", LOG_LEVEL: "info" });
    stopServers.push(() => server.stop());
    const post = (path: string, body: object) =>
      fetch(server.url + path, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ external_account_id: "acct_slowhook", ...body }) });
    expect((await post("/v2/webhook_endpoints", { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` })).status).toBe(200);
    expect((await post("/v2/payment/intent", { amount: "5.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" })).status).toBe(200);
    for (let i = 0; i < 300 && posted.length === 0; i++) await sleep(50);
    expect(posted.length).toBeGreaterThan(0);
    const signalledAt = Date.now();
    server.child.kill("SIGTERM");
    expect(await server.exited, server.output()).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(3_000 + 1_000);
    expect(server.output().split("\n").filter((l) => l.startsWith("{") && JSON.parse(l).level >= 50)).toEqual([]);
  }, 60_000);
});

describe("SIGTERM right after start-up", () => {
  // the process listens last, once nothing of its start-up is left to await (the webhook delivery
  // reading its state on PostgreSQL was, after listening): whoever saw /healthz answer finds the
  // signal handlers installed. Before, on PostgreSQL, every such SIGTERM killed the process (8 of 8)
  it.each(["sqlite", "postgres"] as const)("%s: a SIGTERM as soon as /healthz first answers is a graceful stop, exit 0", async (kind) => {
    for (let i = 0; i < 3; i++) {
      const server = await startServer(stores[kind](), {}, { pollMs: 1 });
      stopServers.push(() => server.stop());
      server.child.kill("SIGTERM");
      expect(await server.exited, server.output()).toBe(0);
    }
  }, 120_000);
});

/**
 * Starts `command` (in its own process group, to clean up whatever it leaves), waits for it to
 * serve, sends SIGTERM to its own pid only (not its group, as `kill $!` or a container's runtime
 * does), and checks the server behind it stopped gracefully: the port closed, "stopped" logged.
 */
async function signalOnlyTheStarter(command: string, args: (port: number) => string[], env: Record<string, string> = {}) {
  const starter = await startInGroup(command, args, { ...stores.sqlite(), SHUTDOWN_GRACE_MS: "0", ...env });
  try {
    starter.child.kill("SIGTERM");
    let gone = false;
    for (let i = 0; i < 150 && !gone; i++) gone = (await sleep(200), (await probe(`http://127.0.0.1:${starter.port}/healthz`)) === "ECONNREFUSED");
    expect(gone, starter.output).toBe(true);
    await expect.poll(() => starter.output, { timeout: 10_000 }).toContain('"msg":"stopped"');
  } finally {
    starter.killGroup();
  }
}

/**
 * Runs `command` in a process group of its own (as a shell runs a job) on a free port, and resolves
 * once its server's /healthz answers; killGroup() ends whatever of the group is left.
 */
async function startInGroup(command: string, args: (port: number) => string[], env: Record<string, string>) {
  const { spawn } = await import("node:child_process");
  const { freePort } = await import("../support/postgres.js");
  const port = await freePort();
  const child = spawn(command, args(port), {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", METRICS_PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const started = {
    child,
    port,
    output: "",
    killGroup() {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // the group is gone: everything stopped
      }
    },
  };
  child.stdout.on("data", (d) => (started.output += d));
  child.stderr.on("data", (d) => (started.output += d));
  for (let i = 0; !(await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)); i++) {
    if (i > 600) {
      started.killGroup();
      throw new Error(`${command} ${args(port).join(" ")} did not come up:\n${started.output}`);
    }
    await sleep(100);
  }
  return started;
}

describe("SIGTERM to the process that started the server", () => {
  // `npm start &` then `kill $!` (a script, a container whose first process is npm) signals npm
  // alone: npm passes it to its script's process, which must be the server (package.json's
  // `exec`), not a shell that dies of it and leaves the server running, orphaned
  it("npm start: reaches the server, a graceful stop, the port closed", () => signalOnlyTheStarter("npm", () => ["start", "--silent"]), 120_000);

  // npm exec runs the command in a shell and does not pass the signal on: both exit, and the
  // server, orphaned, would serve on; started by npm exec, it stops gracefully once its parent is gone
  it("npx cardflow serve: the server stops gracefully too, the port closed", () => signalOnlyTheStarter("npx", (port) => ["cardflow", "serve", "--port", String(port), "--host", "127.0.0.1"]), 120_000);
  // with --workers the primary watches its parent too (the workers' parent is the primary, which stays)
  it("npx cardflow serve --workers 2: the primary and its workers stop gracefully too, the port closed", () => signalOnlyTheStarter("npx", (port) => ["cardflow", "serve", "--port", String(port), "--host", "127.0.0.1", "--workers", "2"]), 120_000);
});

describe("SIGINT to the process group of npm start (Ctrl+C; systemd's KillMode=control-group)", () => {
  // the server gets the signal from its group and again from npm, which forwards it: that is one
  // signal, not a second one ending the grace at once. Here the group is even signalled twice, a
  // few milliseconds apart: still one stop, served through the grace
  it("the grace is kept: /readyz 503 while /healthz is served; a signal a moment later ends it, a graceful stop", async () => {
    const npm = await startInGroup("npm", () => ["start", "--silent"], { ...stores.sqlite(), SHUTDOWN_GRACE_MS: "20000", SHUTDOWN_DEADLINE_MS: "30000" });
    const base = `http://127.0.0.1:${npm.port}`;
    const group = -npm.child.pid!;
    try {
      process.kill(group, "SIGINT");
      await sleep(5);
      process.kill(group, "SIGINT");
      await sleep(500);
      expect([await probe(`${base}/readyz`), await probe(`${base}/healthz`)], npm.output).toEqual([503, 200]);
      await sleep(1_000);
      expect([await probe(`${base}/readyz`), await probe(`${base}/healthz`)], npm.output).toEqual([503, 200]);
      expect(npm.output).not.toContain("second signal");
      // a second signal, a moment after the first: the grace (20 s) ends now
      const secondAt = Date.now();
      process.kill(group, "SIGINT");
      await expect.poll(() => probe(`${base}/healthz`), { timeout: 10_000, interval: 100 }).toBe("ECONNREFUSED");
      expect(Date.now() - secondAt).toBeLessThan(10_000);
      await expect.poll(() => npm.output, { timeout: 10_000 }).toContain('"msg":"stopped"');
      expect(npm.output).toContain("second signal: the grace ends now");
    } finally {
      npm.killGroup();
    }
  }, 120_000);
});

describe("SIGTERM while the process starts", () => {
  // the store does not answer (a database that accepts connections and says nothing): the process
  // is opening it when the signal comes. Nothing was served: it ends at once, exit 0, saying so,
  // instead of by the signal (a supervisor reads that as a crash)
  it("ends it at once with exit 0, not by the signal", async () => {
    const { createServer } = await import("node:net");
    const { spawn } = await import("node:child_process");
    const { SERVER_NODE_ARGS } = await import("../support/server-args.js");
    const { freePort } = await import("../support/postgres.js");
    const sockets: import("node:net").Socket[] = [];
    let connected!: () => void;
    const reached = new Promise<void>((resolve) => (connected = resolve));
    const silent = createServer((socket) => {
      sockets.push(socket);
      connected();
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", () => resolve()));
    const { port: dbPort } = silent.address() as import("node:net").AddressInfo;
    const child = spawn(process.execPath, [...SERVER_NODE_ARGS, "src/main.ts"], {
      env: { ...process.env, DATABASE_URL: `postgres://cardflow:x@127.0.0.1:${dbPort}/cardflow`, PORT: String(await freePort()), HOST: "127.0.0.1", METRICS_PORT: "0", LOG_LEVEL: "info", DATA_DIR: (stores.sqlite() as { DATA_DIR: string }).DATA_DIR },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal)));
    try {
      await reached; // the process is opening its store: its start-up handlers are installed
      child.kill("SIGTERM");
      expect(await exited, output).toBe(0);
      expect(output).toContain("stopped while starting");
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  }, 120_000);
});
