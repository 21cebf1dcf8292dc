// Real `npm start` processes for the multi-process tests: src/main.ts spawned with tsx on a free
// port and a store named by the environment (DATA_DIR for SQLite, DATABASE_URL for PostgreSQL),
// an account and its API key set up beforehand in the test process, and a small HTTP client that
// records every answer (status, request id) for the run's figures.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createApiKeys } from "../../src/api-keys.js";
import { systemClock } from "../../src/clock.js";
import { configFromEnv, openStores } from "../../src/config.js";
import { createEngine } from "../../src/engine.js";
import { randomIds } from "../../src/ids.js";
import { createSimulators } from "../../src/processors/simulator.js";
import type { RecordedEvent } from "../../src/store/port.js";
import { afterAll } from "vitest";
import { freePort, testDatabase } from "../support/postgres.js";
import { SERVER_NODE_ARGS } from "../support/server-args.js";

const MAIN = fileURLToPath(new URL("../../src/main.ts", import.meta.url));

/** The store every process of a test shares, as environment variables. */
export type StoreEnv = { DATA_DIR: string } | { DATABASE_URL: string; DATABASE_SCHEMA: string };

/** A schema of its own on the test database: a fresh PostgreSQL store. */
export const freshSchema = () => `t_${randomUUID().replaceAll("-", "").slice(0, 12)}`;

/** Makers of a fresh store of each kind for a test file: a SQLite directory (removed after the file's tests) or a PostgreSQL schema. */
export async function freshStores(name: string): Promise<Record<"sqlite" | "postgres", () => StoreEnv>> {
  const dir = mkdtempSync(join(tmpdir(), `cardflow-${name}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const database = await testDatabase();
  return {
    sqlite: () => ({ DATA_DIR: mkdtempSync(join(dir, "sqlite-")) }),
    postgres: () => ({ DATABASE_URL: database, DATABASE_SCHEMA: freshSchema() }),
  };
}

const storeConfig = (store: StoreEnv) => configFromEnv({ DATA_DIR: "", DATABASE_URL: "", ...store });

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** What the process wrote (stdout and stderr). */
  output(): string;
  /**
   * Resolves once what the process wrote contains `text` (or after 10 s, for the assertion to say
   * what it wrote): a line written just after the server listens, or logged once a response was
   * sent, reaches this process's pipe after the answer that preceded it.
   */
  outputContaining(text: string): Promise<string>;
  /** SIGTERM, resolves with the exit code (or the signal's name that ended the process: an assertion on the code then says which). */
  stop(): Promise<number | NodeJS.Signals | null>;
  exited: Promise<number | NodeJS.Signals | null>;
}

/**
 * The data directory of the processes on one PostgreSQL store (their host's: the sandbox
 * processor's side, the webhook signing key): a temporary one per store, not the repository's data/.
 */
const hostDirs = new WeakMap<StoreEnv, string>();
const hostRoot = mkdtempSync(join(tmpdir(), "cardflow-hosts-"));
process.once("exit", () => rmSync(hostRoot, { recursive: true, force: true }));
export const hostDir = (store: StoreEnv) => ("DATA_DIR" in store ? store.DATA_DIR : hostDirs.get(store) ?? hostDirs.set(store, mkdtempSync(join(hostRoot, "host-"))).get(store)!);

/** Starts a server and resolves once its /healthz answered (asked every `pollMs`). */
export async function startServer(store: StoreEnv, env: Record<string, string> = {}, { pollMs = 100 } = {}): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...SERVER_NODE_ARGS, MAIN], {
    env: { ...process.env, DATABASE_URL: "", ...store, DATA_DIR: hostDir(store), PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn", WEBHOOK_ALLOW_PRIVATE: "1", METRICS_PORT: "0", SHUTDOWN_GRACE_MS: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal)));
  const url = `http://127.0.0.1:${port}`;
  let gone = false;
  void exited.then(() => (gone = true));
  for (const until = Date.now() + 60_000; ; ) {
    if (gone) throw new Error(`server exited before it listened:\n${output}`);
    if (Date.now() > until) throw new Error(`server did not listen within 60 s:\n${output}`);
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, pollMs));
  }
  return {
    url,
    child,
    output: () => output,
    async outputContaining(text) {
      for (let waited = 0; !output.includes(text) && !gone && waited < 10_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
      return output;
    },
    exited,
    async stop() {
      if (!gone) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** Opens the merchant account and issues its API key, in this process, on the shared store. */
export async function merchantKey(store: StoreEnv, account: string, processor: "A" | "B" = "A"): Promise<string> {
  const { store: events, readModels } = await openStores(storeConfig(store));
  const engine = createEngine({ store: events, readModels, processors: createSimulators({ clock: systemClock, ids: randomIds() }) });
  try {
    await engine.openAccount({ external_account_id: account, processor });
    return (await createApiKeys(engine).issue(account)).key;
  } finally {
    await engine.close();
  }
}

/** Every stored event, read in this process. */
export async function storedEvents(store: StoreEnv): Promise<RecordedEvent[]> {
  const { store: events, readModels } = await openStores(storeConfig(store));
  try {
    return await events.readAll();
  } finally {
    await Promise.all([events.close(), readModels.close()]);
  }
}

export interface Answer {
  status: number;
  body: any;
  requestId: string | null;
  headers: Headers;
  /** When the answer arrived (ms since the epoch). */
  at: number;
}

/** An HTTP client that keeps every answer it got (or the network error, as status 0). */
export function client(key: string) {
  const answers: Answer[] = [];
  async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    let answer: Answer;
    try {
      const res = await fetch(url + path, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      answer = { status: res.status, body: text ? JSON.parse(text) : null, requestId: res.headers.get("request-id"), headers: res.headers, at: Date.now() };
    } catch (error) {
      answer = { status: 0, body: { error: String(error) }, requestId: null, headers: new Headers(), at: Date.now() };
    }
    answers.push(answer);
    return answer;
  }
  return { answers, post };
}
