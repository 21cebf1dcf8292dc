// The system under test, as shipped: `npm start` processes (src/main.ts, through tsx) on one store
// — two on one SQLite data directory, or three with DATABASE_URL on one PostgreSQL (a given URL,
// or an embedded one started here, which can also be stopped and started) — sharing one host
// directory (the sandbox processor's side). The account is opened with the CLI. Every process
// started here dies with this one (test/support/die-with-parent.mjs).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { configFromEnv, openStores } from "../../src/config.js";
import { fileSide, processorSideIn } from "../../src/processors/processor-side.js";
import type { RecordedOutcome } from "../../src/processors/port.js";
import type { ProcessorFault } from "../../src/processors/sandbox-faults.js";
import type { RecordedEvent } from "../../src/store/port.js";
import { freePort, startPostgres, terminateConnections, type RunningPostgres } from "../../test/support/postgres.js";
import { SERVER_NODE_ARGS } from "../../test/support/server-args.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = join(ROOT, "src/main.ts");
/** How long a server may take to listen after it is spawned. */
const START_MS = 180_000;
const CLI = join(ROOT, "bin/cardflow.js");

export type StoreKind = "sqlite" | "postgres";

export interface ClusterOptions {
  store: StoreKind;
  /** PostgreSQL to use (a fresh schema on it); default: an embedded one started for the run. */
  databaseUrl?: string;
  /** Environment added to every server process (a seeded defect, the reconciler's timing). */
  env?: Record<string, string>;
}

interface Slot {
  url: string | null;
  /** Its URL, also while it is down (a request then finds no one: connection refused). */
  last: string;
  child: ChildProcess | null;
  output: string;
}

/** A server process that exited without being killed or stopped by the run. */
export interface Crash {
  server: number;
  at: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

export interface Cluster {
  crashes: Crash[];
  store: StoreKind;
  /** How the store is named to a process: DATA_DIR, or DATABASE_URL and DATABASE_SCHEMA. */
  storeEnv: Record<string, string>;
  /** The embedded PostgreSQL, when this run started it (then the database can be stopped). */
  postgres: RunningPostgres | null;
  servers: number;
  /** The server's URL while it runs, else null. */
  urlOf(server: number): string | null;
  /** The server's last URL, running or not. */
  lastUrlOf(server: number): string;
  kill(server: number): Promise<void>;
  start(server: number): Promise<void>;
  /** pg_terminate_backend on every other connection to the run's database; how many. */
  terminateConnections(): Promise<number>;
  processorFault(fault: ProcessorFault | null): void;
  /** Opens an account with the CLI (as the README says) and answers its API key. */
  openAccount(account: string, processor: "A" | "B"): string;
  events(): Promise<RecordedEvent[]>;
  ledger(): Array<[string, RecordedOutcome]>;
  /** SIGTERM to every server (their exit codes and last output), then the database and the directories go. */
  stop(): Promise<Array<{ server: number; code: number | null; output: string }>>;
}

export async function startCluster({ store, databaseUrl, env = {} }: ClusterOptions): Promise<Cluster> {
  const host = mkdtempSync(join(tmpdir(), "cardflow-chaos-"));
  const postgres = store === "postgres" && !databaseUrl ? await startPostgres() : null;
  const url = databaseUrl ?? postgres?.url;
  const schema = `chaos_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const storeEnv: Record<string, string> = store === "sqlite" ? { DATA_DIR: host, DATABASE_URL: "" } : { DATA_DIR: host, DATABASE_URL: url!, DATABASE_SCHEMA: schema };
  const side = fileSide(processorSideIn(host));
  const slots: Slot[] = Array.from({ length: store === "sqlite" ? 2 : 3 }, () => ({ url: null, last: "http://127.0.0.1:9", child: null, output: "" }));
  const crashes: Crash[] = [];
  let stopping = false;

  async function start(server: number) {
    const slot = slots[server]!;
    const port = await freePort();
    const child = spawn(process.execPath, [...SERVER_NODE_ARGS, MAIN], {
      cwd: ROOT,
      env: { ...process.env, ...storeEnv, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn", METRICS_PORT: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const keep = (d: Buffer) => (slot.output = (slot.output + d.toString()).slice(-20_000));
    child.stdout!.on("data", keep);
    child.stderr!.on("data", keep);
    let exited = false;
    child.once("exit", (code, signal) => {
      exited = true;
      if (slot.child !== child || stopping) return; // killed or stopped by the run, or never started
      // a crash: recorded (an anomaly of the run), and the process started again as a supervisor would
      crashes.push({ server, at: Date.now(), code, signal, output: slot.output });
      slot.url = null;
      slot.child = null;
      void start(server).catch(() => undefined); // a start that fails is a crash too (recorded)
    });
    const url = `http://127.0.0.1:${port}`;
    slot.last = url;
    // generous: on a loaded 2-core CI machine starting a server (compiling it) has taken over 60 s
    for (const deadline = Date.now() + START_MS; ; ) {
      const failed = exited ? "exited before it listened" : Date.now() > deadline ? `did not listen within ${START_MS / 1000} s` : null;
      if (failed) {
        child.kill("SIGKILL");
        crashes.push({ server, at: Date.now(), code: child.exitCode, signal: null, output: `${failed}\n${slot.output}` });
        throw new Error(`server ${server} ${failed}:\n${slot.output}`);
      }
      if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    Object.assign(slot, { url, child });
  }

  async function kill(server: number) {
    const slot = slots[server]!;
    const child = slot.child;
    slot.url = null;
    slot.child = null;
    if (!child || child.exitCode !== null) return;
    const gone = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await gone;
  }

  const cluster: Cluster = {
    store,
    storeEnv,
    postgres,
    servers: slots.length,
    urlOf: (server) => slots[server]!.url,
    lastUrlOf: (server) => slots[server]!.last,
    kill,
    start,
    terminateConnections: () => terminateConnections(url!),
    processorFault: (fault) => side.set("faults", "calls", fault ?? undefined),
    openAccount(account, processor) {
      const cli = spawnSync(process.execPath, [CLI, "accounts", "create", account, "--processor", processor], { cwd: ROOT, env: { ...process.env, ...storeEnv }, encoding: "utf8" });
      if (cli.status !== 0) throw new Error(`cardflow accounts create ${account}: ${cli.stderr}`);
      return cli.stdout.trim();
    },
    async events() {
      const { store: events, readModels } = await openStores(configFromEnv({ ...storeEnv }));
      try {
        return await events.readAll();
      } finally {
        await Promise.all([events.close(), readModels.close()]);
      }
    },
    ledger: () => side.entries<RecordedOutcome>("ledger"),
    crashes,
    async stop() {
      stopping = true;
      const stopped = await Promise.all(
        slots.map(async (slot, server) => {
          const child = slot.child;
          if (!child || child.exitCode !== null) return { server, code: child?.exitCode ?? null, output: slot.output };
          const code = new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
          child.kill("SIGTERM");
          return { server, code: await code, output: slot.output };
        }),
      );
      side.close();
      if (databaseUrl) {
        const admin = new pg.Client({ connectionString: databaseUrl });
        await admin.connect().then(() => admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).finally(() => admin.end());
      }
      await postgres?.stop();
      rmSync(host, { recursive: true, force: true });
      return stopped;
    },
  };
  try {
    await Promise.all(slots.map((_, i) => start(i)));
  } catch (error) {
    await cluster.stop().catch(() => undefined);
    throw error;
  }
  return cluster;
}
