// Shared by the HTTP benchmarks (http.ts: SQLite, http-postgres.ts: PostgreSQL): the server
// processes (scripts/bench/http-server.ts) and the stored-card flow over HTTP.
import autocannon from "autocannon";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { profileFlags, quick, recordPerf } from "./lib.js";

export const SECONDS = quick ? 1 : 5;

export interface Ready {
  port: number;
  key?: string;
  account?: string;
  customer?: string;
  card?: string;
  payment?: string;
}

/**
 * Starts a bench server in its own process (scripts/bench/http-server.ts); resolves when it said
 * READY (on fd 3). The real server's store: DATABASE_URL with a fresh schema, else SQLite in a
 * temporary DATA_DIR (removed when it stops).
 */
export async function start(mode: "real" | "bare", env: Record<string, string> = {}): Promise<{ child: ChildProcess; ready: Ready }> {
  // profiled by scripts/bench/profile.ts --row=4|5|10: under <dir>/<mode>, perf from READY to its exit
  const profile = profileFlags(mode);
  const work = mkdtempSync(join(tmpdir(), "cardflow-http-"));
  const store = env.DATABASE_URL ? { DATABASE_SCHEMA: `bench_${Date.now().toString(36)}${process.pid}` } : { DATABASE_URL: "" };
  const child = spawn(process.execPath, [...profile, "--import", "tsx", "scripts/bench/http-server.ts", mode], {
    env: { ...process.env, DATA_DIR: work, ...store, ...env },
    stdio: ["ignore", "ignore", "inherit", "pipe"],
  });
  child.once("exit", () => rmSync(work, { recursive: true, force: true }));
  const lines = createInterface({ input: child.stdio[3] as NodeJS.ReadableStream });
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`${mode} server exited ${code}`)));
    lines.on("line", (l) => l.startsWith("READY ") && resolve(JSON.parse(l.slice(6)) as Ready));
  });
  recordPerf(child.pid!, mode);
  return { child, ready };
}

export const run = (opts: autocannon.Options) => autocannon({ ...opts, duration: SECONDS });
export const stopped = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once("exit", () => resolve()), child.kill("SIGTERM"))));

export const authHeaders = (ready: Ready) => ({ authorization: `Bearer ${ready.key}`, "content-type": "application/json" });

/** The create body of a stored-card charge with manual capture. */
export const createBody = ({ account, card, customer }: Ready) =>
  JSON.stringify({ external_account_id: account, amount: "10.00", payment_method_types: "card", capture_method: "manual", payment_method_id: card, external_customer_id: customer });

/** What a client remembers between the requests of its flow. */
type Flow = { payment_id: string };

/** Flows/s of `connections` clients, each running create -> authorize -> capture again and again for SECONDS. */
export async function httpFlows(ready: Ready, connections: number): Promise<number> {
  const headers = authHeaders(ready);
  const { account } = ready;
  const result = await run({
    url: `http://127.0.0.1:${ready.port}`,
    connections,
    requests: [
      {
        method: "POST",
        path: "/v2/payment/intent",
        headers,
        body: createBody(ready),
        onResponse: (status, text, context) => {
          if (status === 200 || status === 201) (context as Flow).payment_id = (JSON.parse(text) as Flow).payment_id;
        },
      },
      {
        method: "POST",
        path: "/v2/payment/auth",
        headers,
        setupRequest: (req, context) => ({ ...req, body: JSON.stringify({ external_account_id: account, payment_id: (context as Flow).payment_id }) }),
      },
      {
        method: "POST",
        path: "/v2/payment/capture",
        headers,
        setupRequest: (req, context) => ({ ...req, body: JSON.stringify({ external_account_id: account, payment_id: (context as Flow).payment_id, amount: "10.00" }) }),
      },
    ],
  });
  if (result.non2xx + result.errors) throw new Error(`HTTP flows: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  // a flow is three requests; requests of flows cut off at the end are a fraction of one flow per client
  return result.requests.total / 3 / SECONDS;
}
