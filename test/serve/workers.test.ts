// `cardflow serve --workers 2` as an operator runs it (bin/cardflow.js), on SQLite and on
// PostgreSQL: both workers serve the one port (each new connection may land on either), a payment
// started through one is finished through the other, the primary's METRICS_PORT serves both
// workers' figures summed, and SIGTERM stops both gracefully: exit 0.
import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { connect } from "node:net";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { freshStores, merchantKey, type StoreEnv } from "../multiprocess/servers.js";
import { freePort } from "../support/postgres.js";
import { SERVER_NODE_ARGS } from "../support/server-args.js";

const BIN = fileURLToPath(new URL("../../bin/cardflow.js", import.meta.url));
const stores = await freshStores("workers");
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
});

/** One request on a connection of its own (so the primary may hand it to either worker). */
function call(port: number, method: string, path: string, key: string | null, body?: object): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request({ host: "127.0.0.1", port, method, path, agent: false, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(payload ? { "content-type": "application/json" } : {}) } }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
    });
    req.on("error", reject);
    req.end(payload);
  });
}

/** `serve --workers 2` started; `serve` below waits for its banner (every worker listening). */
async function spawnServe(args: string[], env: Record<string, string>) {
  const port = await freePort();
  const metricsPort = await freePort();
  const child = spawn(process.execPath, [...SERVER_NODE_ARGS, BIN, "serve", "--workers", "2", "--port", String(port), "--host", "127.0.0.1", ...args], {
    env: { ...process.env, DATABASE_URL: "", METRICS_PORT: String(metricsPort), LOG_LEVEL: "info", SHUTDOWN_GRACE_MS: "300", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { port, metricsPort, child, exited, output: () => output };
}

async function serve(args: string[], env: Record<string, string>) {
  const server = await spawnServe(args, env);
  for (let waited = 0; !server.output().includes("with 2 worker processes"); waited += 100) {
    if (server.child.exitCode !== null || waited > 120_000) throw new Error(`serve --workers 2 did not come up:\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return server;
}

async function exercise(store: StoreEnv, args: string[], env: Record<string, string>) {
  const server = await serve(args, env);
  const key = await merchantKey(store, "acct_workers");
  const payments = 8;
  for (let i = 0; i < payments; i++) {
    const created = await call(server.port, "POST", "/v2/payment/intent", key, { external_account_id: "acct_workers", amount: "4.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_w" });
    expect(created.status).toBe(200);
    const paymentId = created.body.payment_id;
    expect((await call(server.port, "POST", "/v2/payment/auth", key, { external_account_id: "acct_workers", payment_id: paymentId })).body.status).toBe("requires_capture");
    expect((await call(server.port, "POST", "/v2/payment/capture", key, { external_account_id: "acct_workers", payment_id: paymentId, amount: "4.00" })).body.status).toBe("succeeded");
  }
  // every request's log line names the worker that served it: both did
  const lines = server.output().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  const workers = new Set(lines.filter((l) => l.msg === "request" && l.route === "/v2/payment/intent").map((l) => l.pid));
  expect(workers.size).toBe(2);

  // the primary's metrics: both workers' requests, summed
  const metrics = await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`).then((r) => r.text());
  const line = metrics.split("\n").find((l) => l.startsWith('cardflow_commands_total{') && l.includes('command="createIntent"') && l.includes('outcome="ok"'));
  expect(line, metrics.slice(0, 2000)).toBeDefined();
  expect(Number(line!.split(" ").pop())).toBe(payments);
  expect(metrics).toContain("nodejs_eventloop_lag_seconds");

  server.child.kill("SIGTERM");
  expect(await server.exited).toBe(0);
  expect(server.output().match(/"msg":"stopped"/g)).toHaveLength(2);
  // the listener is gone
  await expect(call(server.port, "GET", "/healthz", null)).rejects.toMatchObject({ code: "ECONNREFUSED" });
}

describe("cardflow serve --workers 2", () => {
  it("on SQLite (--data-dir): both workers serve the port, the metrics are summed, SIGTERM stops both, exit 0", async () => {
    const store = stores.sqlite() as { DATA_DIR: string };
    await exercise(store, ["--data-dir", store.DATA_DIR], {});
  }, 300_000);

  it("on PostgreSQL (--store postgres:URL): both workers serve the port, the metrics are summed, SIGTERM stops both, exit 0", async () => {
    const store = stores.postgres() as { DATABASE_URL: string; DATABASE_SCHEMA: string };
    await exercise(store, ["--store", `postgres:${store.DATABASE_URL}`], { DATABASE_SCHEMA: store.DATABASE_SCHEMA, DATA_DIR: mkdtempSync(join(tmpdir(), "cardflow-workers-host-")) });
  }, 300_000);

  it("a worker killed and replaced: the summed counters do not go back (the dead worker's counts stay in the sum)", async () => {
    const store = stores.sqlite() as { DATA_DIR: string };
    const server = await serve(["--data-dir", store.DATA_DIR], {});
    const key = await merchantKey(store, "acct_workers");
    const created = async () => {
      const text = await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`).then((r) => (r.status === 200 ? r.text() : ""));
      const line = text.split("\n").find((l) => l.startsWith("cardflow_commands_total{") && l.includes('command="createIntent"') && l.includes('outcome="ok"'));
      return line === undefined ? null : Number(line.split(" ").pop());
    };
    for (let i = 0; i < 6; i++) {
      expect((await call(server.port, "POST", "/v2/payment/intent", key, { external_account_id: "acct_workers", amount: "4.00", payment_method_types: "card", capture_method: "manual" })).status).toBe(200);
    }
    expect(await created()).toBe(6);
    // a worker that served some of them, killed: the primary starts another
    const lines = server.output().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    const victim = lines.find((l) => l.msg === "request" && l.route === "/v2/payment/intent").pid as number;
    process.kill(victim, "SIGKILL");
    await expect.poll(() => server.output().includes("starting another"), { timeout: 30_000 }).toBe(true);
    await expect.poll(created, { timeout: 60_000, interval: 200 }).not.toBeNull();
    expect(await created()).toBe(6);
    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  }, 300_000);

  it("SIGTERM while the workers still start: the primary ends them and exits 0 (a worker without its handler yet lost the primary's word, and was killed at the deadline: exit 1)", async () => {
    const store = stores.sqlite() as { DATA_DIR: string };
    const server = await spawnServe(["--data-dir", store.DATA_DIR], { SHUTDOWN_DEADLINE_MS: "20000" });
    // the primary's metrics listener accepts connections: its signal handlers were installed before
    // it listened, and it forks next (a scrape would wait for the workers' figures: a connection only)
    const accepts = () =>
      new Promise<boolean>((resolve) => {
        const socket = connect(server.metricsPort, "127.0.0.1")
          .on("connect", () => {
            socket.destroy();
            resolve(true);
          })
          .on("error", () => resolve(false));
      });
    for (let waited = 0; !(await accepts()); waited += 20) {
      if (server.child.exitCode !== null || waited > 120_000) throw new Error(`the primary did not come up:\n${server.output()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    server.child.kill("SIGTERM");
    expect(await server.exited, server.output()).toBe(0);
    expect(server.output()).not.toContain("with 2 worker processes");
  }, 120_000);

  it("a scrape while the workers still start answers 503 with Retry-After at once (it waited 5 s for them, then 500); once they listen, 200", async () => {
    const store = stores.sqlite() as { DATA_DIR: string };
    const server = await spawnServe(["--data-dir", store.DATA_DIR], {});
    const scrape = () => fetch(`http://127.0.0.1:${server.metricsPort}/metrics`).then((r) => ({ status: r.status, retryAfter: r.headers.get("retry-after") }), () => null);
    let early: Awaited<ReturnType<typeof scrape>> = null;
    for (let waited = 0; early === null; waited += 20) {
      if (server.child.exitCode !== null || waited > 120_000) throw new Error(`the primary did not come up:\n${server.output()}`);
      early = await scrape();
      if (early === null) await new Promise((r) => setTimeout(r, 20));
    }
    // the first scrape the listener answers: the workers still start (or, rarely, have just listened)
    expect([{ status: 503, retryAfter: "1" }, { status: 200, retryAfter: null }]).toContainEqual(early);
    for (let waited = 0; !server.output().includes("with 2 worker processes"); waited += 100) {
      if (server.child.exitCode !== null || waited > 120_000) throw new Error(`serve --workers 2 did not come up:\n${server.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await scrape()).toEqual({ status: 200, retryAfter: null });
    server.child.kill("SIGTERM");
    expect(await server.exited, server.output()).toBe(0);
    expect(server.output()).not.toContain("metrics: Error");
  }, 120_000);

  it("a worker whose start fails on what the primary cannot check (an adapters module's createProcessors, run once the stores are open) ends the start: one line, exit 1 (it hung, workers alive, nothing listening)", async () => {
    // with the primary's metrics listener, and without one (METRICS_PORT=0: it exited 0, by an empty event loop)
    for (const metrics of [{}, { METRICS_PORT: "0" }] as Record<string, string>[]) {
      const server = await spawnServe(["--data-dir", mkdtempSync(join(tmpdir(), "cardflow-workers-refused-"))], { SANDBOX: "off", PROCESSORS_MODULE: "test/fixtures/processors/throws.mjs", ...metrics });
      expect(await server.exited, JSON.stringify(metrics)).toBe(1);
      expect(server.output()).toContain("cardflow: refusing to start: PROCESSORS_MODULE: createProcessors of test/fixtures/processors/throws.mjs failed (boom in adapter)");
      expect(server.output()).toContain("a worker exited before every worker listened");
      expect(server.output()).not.toMatch(/\n\s+at /);
    }
  }, 120_000);

  it("a setting the primary refuses (the shutdown's deadline, a webhook setting read by the workers) is refused in the one form every refusal to start takes, before any worker starts", async () => {
    for (const [setting, said] of [
      [{ SHUTDOWN_DEADLINE_MS: "1000" }, "SHUTDOWN_DEADLINE_MS: 1000 leaves no time to stop after the grace (SHUTDOWN_GRACE_MS 300); give at least 1300"],
      [{ WEBHOOK_TIMEOUT_MS: "0" }, 'WEBHOOK_TIMEOUT_MS: expected whole milliseconds from 1 to 2147483647, got "0"'],
    ] as const) {
      const dataDir = mkdtempSync(join(tmpdir(), "cardflow-workers-refused-"));
      const server = await spawnServe(["--data-dir", dataDir], setting);
      expect(await server.exited).toBe(1);
      expect(server.output()).toBe(`cardflow: refusing to start: ${said}\n`);
      expect(readdirSync(dataDir)).toEqual([]);
    }
  }, 60_000);

  it("bad usage: --workers 0 and --store jsonl are refused with exit code 2, naming the option", async () => {
    for (const [args, says] of [
      [["--workers", "0"], "--workers: expected a whole number from 1 to 64"],
      [["--workers", "0x2"], "--workers: expected a whole number from 1 to 64"],
      [["--store", "jsonl:/tmp/x.jsonl"], "--store jsonl: serve needs read models beside its events"],
      [["--store", "bogus"], '--store: unknown store "bogus"; use sqlite:PATH, postgres:URL or memory'],
      // postgres: with another database's URL is no unknown store: it is told what postgres: needs
      [["--store", "postgres:mysql://u:pw@h/db"], '--store: postgres:URL needs a postgres:// URL, got "mysql://u:***@h/db"'],
      [[], 'CARDFLOW_STORE: unknown store "bogus"'],
    ] as const) {
      const env = { ...process.env, METRICS_PORT: "0", ...(args.length === 0 && { CARDFLOW_STORE: "bogus:x" }) };
      const child = spawn(process.execPath, [...SERVER_NODE_ARGS, BIN, "serve", ...args], { env, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      expect(code).toBe(2);
      expect(stderr).toContain(says);
    }
  }, 120_000);
});
