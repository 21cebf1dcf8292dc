// `src/main.ts` (what `npm start` runs) as a real child process on a data directory, for the
// crash and multi-process webhook tests; and the account set up in that directory beforehand.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { createApiKeys } from "../../src/api-keys.js";
import { createEngine } from "../../src/engine.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { SERVER_NODE_ARGS } from "../support/server-args.js";

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

/** Opens accounts in the data directory's store and issues a key for each. */
export async function openAccounts(dataDir: string, accounts: string[]): Promise<Record<string, string>> {
  const { events, readModels } = createSqliteStore({ path: join(dataDir, "cardflow.sqlite") });
  const engine = createEngine({ store: events, readModels });
  const keys: Record<string, string> = {};
  for (const account of accounts) {
    await engine.openAccount({ external_account_id: account });
    keys[account] = (await createApiKeys(engine).issue(account, "test")).key;
  }
  await engine.close();
  return keys;
}

export interface ServerProcess {
  child: ChildProcess;
  base: string;
  output: () => string;
  /** The HTTP API with this key. */
  call(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: any }>;
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** Starts the service (node + tsx, no npm in between: a SIGKILL reaches the service itself). */
export async function startServer(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...SERVER_NODE_ARGS, "src/main.ts"], {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "warn", WEBHOOK_ALLOW_PRIVATE: "1", METRICS_PORT: "0", SHUTDOWN_GRACE_MS: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) break;
    if (i > 300 || child.exitCode !== null) throw new Error(`the service did not come up:\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    base,
    output: () => output,
    async call(method, path, key, body) {
      const res = await fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    async kill(signal) {
      if (child.exitCode === null) child.kill(signal);
      await exited;
    },
  };
}
