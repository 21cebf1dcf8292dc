// The service's configuration from the environment, and the stores it runs on. Shared by
// `npm start` (src/main.ts) and the CLI, so both open the same data.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { defaultDataDir } from "./package-root.js";
import { createPostgresStore } from "./store/postgres/index.js";
import { createSqliteStore } from "./store/sqlite/index.js";
import type { EventStore, ReadModelStore } from "./store/port.js";

export interface ServiceConfig {
  port: number;
  host: string;
  /** A DATA_DIR that is set is taken as it is (a relative one from the current folder); else see defaultDataDir. */
  dataDir: string;
  /** PostgreSQL (postgres://…): several processes share it. Unset: SQLite under dataDir. */
  databaseUrl: string | null;
  /** The PostgreSQL schema holding cardflow's tables (default "cardflow"). */
  databaseSchema: string;
  /** SQLite: how long a write waits for another process's write lock before a 503. */
  sqliteBusyTimeoutMs: number;
  /** Blocking auth on a synchronous terminal gives up after this (spec §8: 120 s). */
  syncAuthTimeoutMs: number;
  /** The reconciler resolves processor calls left without outcome for longer than this (above any call's timeout). */
  reconcileGraceMs: number;
  /** How often the server looks for such calls (it also does at start-up). */
  reconcileIntervalMs: number;
  idempotencyTtlMs: number;
  /** Simulated captures: "immediate" (success at once) or "requested" (capture_requested, settled after captureSettleMs). */
  captures: "immediate" | "requested";
  captureSettleMs: number;
  /** Simulated processor answer time. */
  processorLatencyMs: number;
  logLevel: string;
  /** SANDBOX=off: no /sim/* endpoints and no scripted test-card or test-amount outcomes. */
  sandbox: boolean;
  /**
   * TRUST_PROXY: behind a load balancer, the client address is taken from X-Forwarded-For
   * (true: trust every hop, or the proxies' addresses/CIDRs, comma separated); default false.
   */
  trustProxy: boolean | string;
}

function number(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name}: expected a non-negative number, got ${JSON.stringify(raw)}`);
  return value;
}

function sandbox(raw: string | undefined): boolean {
  const value = (raw ?? "").trim().toLowerCase();
  if (["", "on", "true", "1"].includes(value)) return true;
  if (["off", "false", "0"].includes(value)) return false;
  throw new Error(`SANDBOX: expected on or off, got ${JSON.stringify(raw)}`);
}

function trustProxy(raw: string | undefined): boolean | string {
  if (raw === undefined || raw === "" || raw === "false") return false;
  if (raw === "true") return true;
  return raw;
}

function databaseUrl(raw: string | undefined): string | null {
  if (!raw) return null;
  if (!/^postgres(ql)?:\/\//.test(raw)) throw new Error(`DATABASE_URL: expected a postgres:// URL, got ${JSON.stringify(raw.split("@").pop())}`);
  return raw;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  return {
    port: number(env, "PORT", 8080),
    host: env.HOST || "0.0.0.0",
    dataDir: resolve(env.DATA_DIR || defaultDataDir()),
    databaseUrl: databaseUrl(env.DATABASE_URL),
    databaseSchema: env.DATABASE_SCHEMA || "cardflow",
    sqliteBusyTimeoutMs: number(env, "SQLITE_BUSY_TIMEOUT_MS", 5_000),
    syncAuthTimeoutMs: number(env, "SYNC_AUTH_TIMEOUT_MS", 120_000),
    reconcileGraceMs: number(env, "RECONCILE_GRACE_MS", 30_000),
    reconcileIntervalMs: number(env, "RECONCILE_INTERVAL_MS", 10_000),
    idempotencyTtlMs: number(env, "IDEMPOTENCY_TTL_HOURS", 24) * 3_600_000,
    captures: env.SIM_CAPTURES === "requested" ? "requested" : "immediate",
    captureSettleMs: number(env, "SIM_CAPTURE_SETTLE_MS", 1_000),
    processorLatencyMs: number(env, "SIM_PROCESSOR_LATENCY_MS", 0),
    logLevel: env.LOG_LEVEL || "info",
    sandbox: sandbox(env.SANDBOX),
    trustProxy: trustProxy(env.TRUST_PROXY),
  };
}

export interface Stores {
  store: EventStore;
  readModels: ReadModelStore;
  /** Where the data lives, for messages. */
  description: string;
}

/** A store asked to exist (a read-only command) that does not: nothing was created. */
export class StoreMissing extends Error {
  override readonly name = "StoreMissing";
}

/**
 * The service's stores: PostgreSQL when DATABASE_URL is set (several processes may share it),
 * else one SQLite file under DATA_DIR (events, read models, idempotency records). With
 * `mustExist` (commands that only read), a missing SQLite file is refused instead of created.
 */
export async function openStores(
  config: Pick<ServiceConfig, "dataDir" | "databaseUrl" | "databaseSchema" | "sqliteBusyTimeoutMs">,
  { mustExist = false }: { mustExist?: boolean } = {},
): Promise<Stores> {
  if (config.databaseUrl) {
    const { events, readModels } = await createPostgresStore({ connectionString: config.databaseUrl, schema: config.databaseSchema });
    const url = new URL(config.databaseUrl);
    return { store: events, readModels, description: `PostgreSQL ${url.host}${url.pathname} (schema ${config.databaseSchema})` };
  }
  const path = join(config.dataDir, "cardflow.sqlite");
  if (mustExist && !existsSync(path)) throw new StoreMissing(`no store at ${path} (DATA_DIR ${config.dataDir}): nothing was created; start the service (npm start) or set DATA_DIR`);
  const { events, readModels } = createSqliteStore({ path, busyTimeoutMs: config.sqliteBusyTimeoutMs });
  return { store: events, readModels, description: `SQLite ${path}` };
}
