// The server as shipped, for the benchmarks that run it (mixed.ts, lists.ts, noisy-neighbour.ts): src/main.ts (what
// `npm start` runs: tsx src/main.ts) in its own process on a free port, its store named by the
// environment (DATA_DIR for SQLite, DATABASE_URL for PostgreSQL), with the event-loop delay
// measured inside it (./loop-delay.mjs, preloaded) and read by the benchmark. API keys are issued
// before it starts, on the same store, in this process.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createApiKeys } from "../../src/api-keys.js";
import { configFromEnv, openStores } from "../../src/config.js";
import { createEngine } from "../../src/engine.js";
import { freePort } from "../../test/support/postgres.js";
import { profileFlags, recordPerf } from "./lib.js";

export type StoreEnv = { DATA_DIR: string } | { DATABASE_URL: string; DATABASE_SCHEMA: string };

export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
  mean: number;
  samples: number;
}

export interface Served {
  url: string;
  pid: number;
  /** The event-loop delay inside the server since the last reset (ms). */
  loopDelay(): Promise<LoopDelay>;
  resetLoopDelay(): Promise<void>;
  /** The server's CPU time so far, user + system, every thread (s; /proc, 10 ms ticks). */
  cpuSeconds(): number;
  /** Resolves once the server's CPU stayed under 5% of a core for 2 s in a row (its start-up catch-ups done). */
  idle(maxMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const MAIN = fileURLToPath(new URL("../../src/main.ts", import.meta.url));
const PRELOAD = fileURLToPath(new URL("./loop-delay.mjs", import.meta.url));
/** The server exits when the benchmark's process is gone (never left running after a crash). */
const DIE_WITH_PARENT = fileURLToPath(new URL("../../test/support/die-with-parent.mjs", import.meta.url));

/** Opens the accounts (processor A, USD) and issues one API key each, on the store the server will use. */
export async function accountKeys(store: StoreEnv, accounts: string[]): Promise<Map<string, string>> {
  const { store: events, readModels } = await openStores(configFromEnv({ DATA_DIR: "", DATABASE_URL: "", ...store }));
  const engine = createEngine({ store: events, readModels });
  try {
    const apiKeys = createApiKeys(engine);
    const keys = new Map<string, string>();
    for (const account of accounts) {
      await engine.openAccount({ external_account_id: account, processor: "A" }).catch(() => undefined); // already open: keep it
      keys.set(account, (await apiKeys.issue(account)).key);
    }
    return keys;
  } finally {
    await engine.close();
  }
}

const cpuTicks = (pid: number) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return Number(f[11]) + Number(f[12]);
  } catch {
    return NaN;
  }
};

/**
 * The server on two free ports. A port found free can be taken by another process before the
 * server binds it (an outbound connection's ephemeral port, another row's server): the start is
 * refused then, and tried again on other ports (CI once lost a row to it).
 */
export async function serve(store: StoreEnv, env: Record<string, string> = {}): Promise<Served> {
  for (let tries = 1; ; tries++) {
    try {
      return await serveOn(store, env, await freePort(), await freePort());
    } catch (error) {
      if (tries >= 3 || !/already in use/.test(String((error as Error).message))) throw error;
      process.stderr.write(`a port the server was given was taken meanwhile: starting it again on others\n`);
    }
  }
}

async function serveOn(store: StoreEnv, env: Record<string, string>, port: number, metricsPort: number): Promise<Served> {
  const work = mkdtempSync(join(tmpdir(), "cardflow-served-"));
  const portFile = join(work, "loop-delay.port");
  // profiled by scripts/bench/profile.ts --row=13a: under <dir>/real, perf from its listening to its exit
  const profile = profileFlags("real");
  const child = spawn(process.execPath, [...profile, "--import", "tsx", "--import", DIE_WITH_PARENT, "--import", PRELOAD, MAIN], {
    // the shipped defaults, but for where it listens and stores; metrics on (ROUND3-NOTES), on a free port of their own
    env: { ...process.env, DATABASE_URL: "", ...store, PORT: String(port), HOST: "127.0.0.1", METRICS_PORT: String(metricsPort), LOOP_DELAY_PORT_FILE: portFile, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let errors = "";
  child.stderr!.on("data", (d: Buffer) => (errors = (errors + d.toString()).slice(-4_000)));
  let gone = false;
  let stopping = false;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      gone = true;
      // a server gone before stop(), or stopped but not cleanly: say how, with its last words (the benchmark's errors follow from it)
      if (!stopping || code !== 0) process.stderr.write(`the server (pid ${child.pid}) ended with ${signal ?? `code ${code}`}${stopping ? " (stop() had sent SIGTERM or found it gone)" : " before stop()"}; its stderr's tail:\n${errors}\n`);
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  for (let waited = 0; ; waited += 100) {
    if (gone) {
      rmSync(work, { recursive: true, force: true });
      throw new Error(`the server exited before it listened:\n${errors}`);
    }
    if (waited > 300_000) throw new Error(`the server did not listen within 300 s:\n${errors}`);
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  recordPerf(child.pid!, "real");
  const delayUrl = () => `http://127.0.0.1:${readFileSync(portFile, "utf8")}`;
  return {
    url,
    pid: child.pid!,
    loopDelay: async () => (await (await fetch(`${delayUrl()}/`)).json()) as LoopDelay,
    resetLoopDelay: async () => void (await fetch(`${delayUrl()}/reset`)).arrayBuffer(),
    cpuSeconds: () => cpuTicks(child.pid!) / 100,
    async idle(maxMs = 900_000) {
      const until = Date.now() + maxMs;
      // under --cpu-prof the profiler's own sampling keeps an idle process above 5% of a core
      const quietTicks = process.env.CPU_PROF ? 25 : 5;
      let quiet = 0;
      for (let before = cpuTicks(child.pid!); quiet < 2 && Date.now() < until; ) {
        await new Promise((r) => setTimeout(r, 1_000));
        const now = cpuTicks(child.pid!);
        quiet = Number.isNaN(now) || now - before < quietTicks ? quiet + 1 : 0; // a tick is 10 ms of CPU: 5 in 1 s is 5% of a core
        before = now;
      }
    },
    async stop() {
      stopping = true;
      if (!gone) child.kill("SIGTERM");
      await exited;
      rmSync(work, { recursive: true, force: true });
    },
  };
}
