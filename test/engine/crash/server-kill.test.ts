// A real server process under load, killed with SIGKILL while processor calls are in flight
// (the simulated processors answer after 300 ms and keep their ledger in a file beside the store,
// as a real processor keeps its own). Restarted, its start-up reconciler pass closes every attempt
// the kill left open; then cardflow's events agree with the processors' ledger. Prints how many
// attempts the pass found and how long it took.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, expect, it } from "vitest";
import { configFromEnv, openStores } from "../../../src/config.js";
import { createEngine } from "../../../src/engine.js";
import { createLedger } from "../../../src/processors/ledger.js";
import { fileSide, processorSideIn } from "../../../src/processors/processor-side.js";
import { disagreements } from "./scenarios.js";
import { SERVER_NODE_ARGS } from "../../support/server-args.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-kill-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const root = new URL("../../../", import.meta.url).pathname;
const port = 20_000 + Math.floor(Math.random() * 20_000);
const env = { ...process.env, DATA_DIR: dir, PORT: String(port), HOST: "127.0.0.1", SIM_PROCESSOR_LATENCY_MS: "300", RECONCILE_GRACE_MS: "0", LOG_LEVEL: "info", METRICS_PORT: "0", SHUTDOWN_GRACE_MS: "0" };

/** Starts the server; resolves once it listens, with its log lines (pino JSON on stdout). */
async function startServer(): Promise<{ child: ChildProcess; logs: Record<string, unknown>[] }> {
  const child = spawn(process.execPath, [...SERVER_NODE_ARGS, "src/main.ts"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  const logs: Record<string, unknown>[] = [];
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry.msg === "cardflow listening") resolve();
      } catch {
        /* not a log line */
      }
    });
    child.once("exit", (code) => reject(new Error(`server exited early (${code})`)));
  });
  return { child, logs };
}

async function post(key: string, path: string, body: object) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return (await res.json()) as Record<string, unknown>;
}

it("SIGKILL mid-load, restart: the start-up reconciler closes every open attempt", { timeout: 120_000 }, async () => {
  const key = spawnSync(process.execPath, ["bin/cardflow.js", "accounts", "create", "acct_kill"], { cwd: root, env, encoding: "utf8" }).stdout.trim();
  expect(key).toMatch(/\S{20,}/);

  const first = await startServer();
  let stop = false;
  const worker = async () => {
    while (!stop) {
      const intent = await post(key, "/v2/payment/intent", { external_account_id: "acct_kill", amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: "pm_card_visa", external_customer_id: "cus_1" });
      const ref = { external_account_id: "acct_kill", payment_id: intent.payment_id };
      await post(key, "/v2/payment/auth", ref);
      await post(key, "/v2/payment/capture", { ...ref, amount: "10.00" });
      await post(key, "/v2/payment/refund", { ...ref, amount: "4.00" });
    }
  };
  const load = Array.from({ length: 16 }, () => worker().catch(() => undefined));
  await new Promise((r) => setTimeout(r, 2_500));
  const killed = new Promise((r) => first.child.once("exit", r));
  first.child.kill("SIGKILL");
  stop = true;
  await Promise.all([killed, ...load]);

  const second = await startServer();
  const deadline = Date.now() + 30_000;
  let pass: Record<string, unknown> | undefined;
  while (!pass && Date.now() < deadline) {
    pass = second.logs.find((l) => l.msg === "reconciled open attempts");
    if (!pass) await new Promise((r) => setTimeout(r, 100));
  }
  const stopped = new Promise((r) => second.child.once("exit", r));
  second.child.kill("SIGTERM");
  await stopped;
  expect(pass, "the start-up pass found the attempts the kill left open").toBeDefined();
  console.info(`server killed mid-load: the start-up reconciler found ${pass!.found} open attempt(s), resolved ${pass!.resolved}, in ${pass!.duration_ms} ms`);
  expect(pass!.found).toBeGreaterThan(0);
  expect(pass!.resolved).toBe(pass!.found);

  // the store after the restart, against the processors' ledger
  const { store, readModels } = await openStores(configFromEnv(env));
  const engine = createEngine({ store, readModels });
  try {
    expect(await disagreements(engine, { ledger: createLedger(fileSide(processorSideIn(dir))) })).toEqual([]);
  } finally {
    await engine.close();
  }
});
