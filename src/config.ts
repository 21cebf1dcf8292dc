// The service's configuration from the environment, and the stores it runs on. Shared by
// `npm start` (src/main.ts) and the CLI, so both open the same data.
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { ConfigurationError, makeDataDirectory } from "./data-directory.js";
import { envBoolean, envChoice, envNumber, isUnset, MAX_TIMER_MS } from "./settings.js";
import { join, resolve } from "node:path";
import { coverEveryAddress, parseCidr } from "./outbound/address-policy.js";
import { createOutbound, type Outbound } from "./outbound/client.js";
import { defaultDataDir } from "./package-root.js";
import { createPostgresStore } from "./store/optional.js";
import { createSqliteStore } from "./store/sqlite/index.js";
import { missingSqliteStore } from "./store/sqlite/open.js";
import { StoreMissing, type EventStore, type ReadModelStore } from "./store/port.js";
import { StoreOpenFailed, StoreUnavailable } from "./store/port/unavailable.js";
import { SCHEMA_NAME, SCHEMA_RULE } from "./store/sql.js";

export interface ServiceConfig {
  port: number;
  host: string;
  /** A DATA_DIR that is set is taken as it is (a relative one from the current folder: see src/main.ts for npm start); else see defaultDataDir. */
  dataDir: string;
  /** PostgreSQL (postgres://…): several processes share it. Unset: SQLite under dataDir. */
  databaseUrl: string | null;
  /** Where databaseUrl was given, for messages: DATABASE_URL, or the option or variable `serve` took it from (CARDFLOW_DATABASE_URL_FROM). */
  databaseUrlFrom?: string;
  /** Where dataDir was given, for messages: DATA_DIR, or the option a command took it from (CARDFLOW_DATA_DIR_FROM). */
  dataDirFrom?: string;
  /** The PostgreSQL schema holding cardflow's tables (default "cardflow"). */
  databaseSchema: string;
  /** PG_POOL_SIZE: PostgreSQL connections per process; null: the store's default (10). */
  databasePoolSize: number | null;
  /** SQLite: how long a write waits for another process's write lock before a 503. */
  sqliteBusyTimeoutMs: number;
  /** Blocking auth on a synchronous terminal gives up after this (spec §8: 120 s). */
  syncAuthTimeoutMs: number;
  /** The reconciler resolves processor calls left without outcome for longer than this (above any call's timeout). */
  reconcileGraceMs: number;
  /** How often the server looks for such calls (it also does at start-up). */
  reconcileIntervalMs: number;
  idempotencyTtlMs: number;
  /** IDEMPOTENCY_MAX_KEYS_PER_ACCOUNT: records one account may hold at once (then 429). */
  idempotencyMaxKeysPerAccount: number;
  /** Simulated captures: "immediate" (success at once) or "requested" (capture_requested, settled after captureSettleMs). */
  captures: "immediate" | "requested";
  captureSettleMs: number;
  /** Simulated processor answer time. */
  processorLatencyMs: number;
  logLevel: string;
  /**
   * The sandbox (simulated processors, test cards, /sim) or production (real processor adapters
   * only): SANDBOX=on|off, else off when NODE_ENV=production, else on.
   */
  sandbox: boolean;
  /** PROCESSORS_MODULE: the module exporting the real processor adapters (src/processors/adapters.ts). */
  processorsModule: string | null;
  /** Every outbound request's rules (src/outbound/client.ts). */
  outbound: OutboundConfig;
  /**
   * TRUST_PROXY: behind a load balancer, the client address is taken from X-Forwarded-For when
   * the connection comes from one of these proxy addresses or CIDRs; default none.
   */
  trustProxy: string[] | false;
}

export interface OutboundConfig {
  /** OUTBOUND_ALLOWLIST: addresses or CIDRs allowed whatever they are (a processor on a private network). */
  allowlist: string[];
  /** WEBHOOK_ALLOW_PRIVATE=on (1, true, yes), sandbox only: loopback and private-use receivers (local development). */
  allowPrivate: boolean;
  /** OUTBOUND_CA_FILE: PEM certificates trusted besides the system's (a processor's private CA). */
  caFile: string | null;
}

/** The configuration cannot run: the message names the variable and what it needs. */
export { ConfigurationError, makeDataDirectory };
// the setting readers, where the groups of settings and the CLI have always taken them
export { envBoolean, envChoice, envNumber, MAX_TIMER_MS, readDecimal } from "./settings.js";

const poolSize = (env: NodeJS.ProcessEnv): number | null =>
  isUnset(env.PG_POOL_SIZE) ? null : envNumber(env, "PG_POOL_SIZE", 0, { min: 1, max: 100, integer: true, expected: "a whole number of connections from 1 to 100" });

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const port = (env: NodeJS.ProcessEnv, name: string, fallback: number): number => envNumber(env, name, fallback, { max: 65535, integer: true, expected: "a port number from 0 to 65535" });

/** A comma-separated list of addresses or CIDRs; each entry checked (an empty one too: a list with a gap was not written as meant). */
function cidrList(name: string, raw: string | undefined, hint = ""): string[] {
  if (!raw?.trim()) return [];
  const entries = raw.split(",").map((e) => e.trim());
  for (const entry of entries) {
    try {
      if (entry === "") throw new Error(`${JSON.stringify(raw)} has an empty entry`);
      parseCidr(entry);
    } catch (error) {
      throw new ConfigurationError(`${name}: ${(error as Error).message}; expected addresses or CIDRs, comma separated${hint}`);
    }
  }
  return entries;
}

function trustProxy(raw: string | undefined): string[] | false {
  const value = (raw ?? "").trim();
  if (value === "" || value === "false") return false;
  // trusting every hop lets any client write its own X-Forwarded-For (and escape the rate limit)
  const everyHop = "lets any client choose its address; give the load balancers' addresses or CIDRs, e.g. TRUST_PROXY=10.0.0.0/8";
  if (value === "true") throw new ConfigurationError(`TRUST_PROXY: true (trust every hop) ${everyHop}`);
  const entries = cidrList("TRUST_PROXY", value, " (the load balancers')");
  if (coverEveryAddress(entries)) throw new ConfigurationError(`TRUST_PROXY: ${value} (every address, together: trust every hop) ${everyHop}`);
  return entries;
}

function outbound(env: NodeJS.ProcessEnv, isSandbox: boolean): OutboundConfig {
  const allowPrivate = envBoolean(env, "WEBHOOK_ALLOW_PRIVATE", false);
  if (allowPrivate && !isSandbox) throw new ConfigurationError("WEBHOOK_ALLOW_PRIVATE: only in the sandbox; in production allow a private receiver's or processor's address with OUTBOUND_ALLOWLIST");
  return { allowlist: cidrList("OUTBOUND_ALLOWLIST", env.OUTBOUND_ALLOWLIST), allowPrivate, caFile: env.OUTBOUND_CA_FILE || null };
}

/** `from`: where it was given (DATABASE_URL, or serve's --database-url or --store), for the refusal's words. */
function databaseUrl(raw: string | undefined, from: string): string | null {
  if (!raw) return null;
  if (!/^postgres(ql)?:\/\//.test(raw)) throw new ConfigurationError(`${from}: expected a postgres:// URL, got ${JSON.stringify(withoutPassword(raw))}`);
  return raw;
}

/**
 * A connection URL without its password (user:PASSWORD@, ?password=), for messages. The user part
 * runs to the last "@": a password written with "/", "#", "?" or "@" unencoded is masked whole too
 * (a host or path with an "@" is masked a little more than needed, never less).
 */
export function withoutPassword(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? "";
  const rest = url.slice(scheme.length).replace(/^([^:/@?#]*):.*@/, "$1:***@");
  return (scheme + rest).replace(/([?&]password=)[^&#]*/gi, "$1***");
}

function databaseSchema(raw: string | undefined): string {
  if (raw === undefined || raw === "") return "cardflow";
  if (!SCHEMA_NAME.test(raw)) throw new ConfigurationError(`DATABASE_SCHEMA: expected a schema name of ${SCHEMA_RULE}, got ${JSON.stringify(raw)}`);
  return raw;
}

/**
 * NODE_ENV=production, written exactly. A near miss (Production, "production ") is refused, SANDBOX
 * set or not: it was no production, and without SANDBOX it ran the sandbox (simulated money).
 */
function isProduction(raw: string | undefined): boolean {
  if (raw === "production") return true;
  if (raw?.trim().toLowerCase() === "production") throw new ConfigurationError(`NODE_ENV: expected production written exactly (lower case, no spaces), got ${JSON.stringify(raw)}; as written it is not production: without SANDBOX the sandbox would run (simulated processors)`);
  return false;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  // SANDBOX wins when set; otherwise NODE_ENV=production means production
  const isSandbox = envBoolean(env, "SANDBOX", !isProduction(env.NODE_ENV));
  return {
    port: port(env, "PORT", 8080),
    host: env.HOST || "0.0.0.0",
    dataDir: resolve(env.DATA_DIR || defaultDataDir()),
    databaseUrl: databaseUrl(env.DATABASE_URL, env.CARDFLOW_DATABASE_URL_FROM || "DATABASE_URL"),
    databaseUrlFrom: env.CARDFLOW_DATABASE_URL_FROM || "DATABASE_URL",
    dataDirFrom: env.CARDFLOW_DATA_DIR_FROM || "DATA_DIR",
    databaseSchema: databaseSchema(env.DATABASE_SCHEMA),
    databasePoolSize: poolSize(env),
    sqliteBusyTimeoutMs: envNumber(env, "SQLITE_BUSY_TIMEOUT_MS", 5_000, { max: MAX_TIMER_MS, integer: true, expected: `a whole number of milliseconds from 0 to ${MAX_TIMER_MS}` }),
    syncAuthTimeoutMs: envNumber(env, "SYNC_AUTH_TIMEOUT_MS", 120_000, { min: 1, max: MAX_TIMER_MS, expected: `whole milliseconds, 1 or more and at most ${MAX_TIMER_MS} (0: every blocking authorization would give up at once)` }),
    reconcileGraceMs: envNumber(env, "RECONCILE_GRACE_MS", 30_000, { expected: "whole milliseconds, 0 or more" }),
    reconcileIntervalMs: envNumber(env, "RECONCILE_INTERVAL_MS", 10_000, { min: 1, max: MAX_TIMER_MS, expected: `whole milliseconds, 1 or more and at most ${MAX_TIMER_MS} (0, or past a timer's longest, the reconciler would run without pause)` }),
    // at most a year: a longer keeping time is no retry's, and past ~2.4 billion hours the moment it began is no date (every keyed request failed)
    idempotencyTtlMs: envNumber(env, "IDEMPOTENCY_TTL_HOURS", 24, { min: 1, max: 8_760, integer: false, expected: "from 1 to 8760 hours (shorter, a client's retry with the same Idempotency-Key could act again; 8760 is a year)" }) * 3_600_000,
    idempotencyMaxKeysPerAccount: envNumber(env, "IDEMPOTENCY_MAX_KEYS_PER_ACCOUNT", 1_000_000, { min: 1, expected: "a whole number, at least 1 (0: every request with an Idempotency-Key would be refused)" }),
    captures: envChoice(env, "SIM_CAPTURES", ["immediate", "requested"], "immediate"),
    captureSettleMs: envNumber(env, "SIM_CAPTURE_SETTLE_MS", 1_000, { max: MAX_TIMER_MS, expected: `whole milliseconds from 0 to ${MAX_TIMER_MS}` }),
    processorLatencyMs: envNumber(env, "SIM_PROCESSOR_LATENCY_MS", 0, { max: MAX_TIMER_MS, expected: `whole milliseconds from 0 to ${MAX_TIMER_MS}` }),
    logLevel: envChoice(env, "LOG_LEVEL", LOG_LEVELS, "info"),
    sandbox: isSandbox,
    processorsModule: env.PROCESSORS_MODULE || null,
    outbound: outbound(env, isSandbox),
    trustProxy: trustProxy(env.TRUST_PROXY),
  };
}

/** The guarded outbound client of this configuration (webhooks, processor adapters). */
export function outboundOf(config: Pick<ServiceConfig, "sandbox" | "outbound">): Outbound {
  const { allowlist, allowPrivate, caFile } = config.outbound;
  let ca: string | undefined;
  if (caFile) {
    try {
      ca = readFileSync(caFile, "utf8");
    } catch (error) {
      throw new ConfigurationError(`OUTBOUND_CA_FILE: cannot read ${caFile} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    checkCertificates(caFile, ca);
  }
  return createOutbound({ sandbox: config.sandbox, allowlist, allowPrivate, ca });
}

/** A CA file holds PEM certificates, each one readable: else every processor call would fail its TLS check, later. */
function checkCertificates(file: string, pem: string): void {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new ConfigurationError(`OUTBOUND_CA_FILE: ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  blocks.forEach((block, i) => {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw new ConfigurationError(`OUTBOUND_CA_FILE: certificate ${i + 1} of ${file} cannot be read (${(error as Error).message})`);
    }
  });
}

export interface Stores {
  store: EventStore;
  readModels: ReadModelStore;
  /** Where the data lives, for messages. */
  description: string;
  /** Only when this open created a PostgreSQL schema: drops it, after the stores are closed. */
  discard?: () => Promise<void>;
}

/**
 * The service's stores: PostgreSQL when DATABASE_URL is set (several processes may share it),
 * else one SQLite file under DATA_DIR (events, read models, idempotency records). With
 * `mustExist` (commands that only read), a missing SQLite file or PostgreSQL schema is refused
 * (StoreMissing) instead of created. `unbounded` (commands over a whole store): no PostgreSQL statement bound.
 */
export async function openStores(
  config: Pick<ServiceConfig, "dataDir" | "dataDirFrom" | "databaseUrl" | "databaseUrlFrom" | "databaseSchema" | "databasePoolSize" | "sqliteBusyTimeoutMs">,
  { mustExist = false, unbounded = false }: { mustExist?: boolean; unbounded?: boolean } = {},
): Promise<Stores> {
  if (config.databaseUrl) {
    const description = `PostgreSQL ${withoutPassword(config.databaseUrl)} (schema ${config.databaseSchema})`;
    const { events, readModels, discard } = await createPostgresStore({ connectionString: config.databaseUrl, schema: config.databaseSchema, mustExist, ...(config.databasePoolSize !== null && { poolSize: config.databasePoolSize }), ...(unbounded && { statementTimeoutMillis: 0 }) }).catch((error: unknown) => {
      throw error instanceof StoreMissing ? new StoreMissing(`no store in ${description}: nothing was created; start the service (cardflow serve, or npm start in a checkout) or set DATABASE_SCHEMA`) : openFailed(error, description, { source: config.databaseUrlFrom ?? "DATABASE_URL", url: config.databaseUrl! });
    });
    return { store: events, readModels, description, ...(discard && { discard }) };
  }
  const path = join(config.dataDir, "cardflow.sqlite");
  const missing = mustExist ? missingSqliteStore(path) : null;
  if (missing !== null) throw new StoreMissing(`no store at ${path} (${config.dataDirFrom ?? "DATA_DIR"} ${config.dataDir}${missing && `; ${missing}`}): nothing was created; start the service (cardflow serve, or npm start in a checkout) or set DATA_DIR`);
  const description = `SQLite ${path}`;
  try {
    const { events, readModels } = createSqliteStore({ path, busyTimeoutMs: config.sqliteBusyTimeoutMs });
    return { store: events, readModels, description };
  } catch (error) {
    throw openFailed(error, description);
  }
}

/**
 * What stopped a store's opening, said naming it (StoreOpenFailed): a SQLite store's message names
 * its file already; a PostgreSQL one gets where the URL was given (`source`: DATABASE_URL, --store)
 * and the URL, password masked. A refusal (StoreMissing) or a setting's error is left as it is.
 */
export function openFailed(error: unknown, store: string, server?: { source: string; url: string; kind?: "PostgreSQL" | "KurrentDB" }): unknown {
  if (error instanceof StoreMissing || error instanceof ConfigurationError || error instanceof StoreOpenFailed) return error;
  const unavailable = error instanceof StoreUnavailable;
  if (!server) return new StoreOpenFailed(store, error instanceof Error ? error.message : String(error), unavailable, { cause: error });
  const cause = ((unavailable ? error.cause : error) ?? {}) as { code?: string; message?: string; name?: string };
  const login = ["28P01", "28000"].includes(cause.code ?? "");
  const what = unavailable ? "cannot be reached" : login ? "refused the login" : "cannot be opened";
  const why = cause.message || cause.code || cause.name || String(error);
  return new StoreOpenFailed(store, `${server.source}: ${server.kind ?? "PostgreSQL"} ${withoutPassword(server.url)} ${what} (${why})`, unavailable, { cause: error });
}

/**
 * What stopped a start (a ConfigurationError, a store that cannot be opened, an address that cannot
 * be bound...) as one line, `cardflow: refusing to start: …`, then exit 1: no stack trace, a
 * service that cannot run as configured does not start.
 */
export function refusedStart(error: unknown): never {
  process.stderr.write(`cardflow: refusing to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
