// `cardflow serve [--port] [--host] [--store | --data-dir | --database-url] [--workers N]`: the HTTP
// API, exactly the process `npm start` runs (src/serve/run.ts), so an installed package starts it
// with `npx cardflow serve`. The environment configures it as it does npm start (PORT, HOST,
// DATA_DIR, DATABASE_URL, LOG_LEVEL, METRICS_PORT, SHUTDOWN_GRACE_MS...); an option wins over its
// variable. `--workers N` runs N processes sharing the port (src/serve/cluster.ts).
import cluster from "node:cluster";
import { basename, dirname, resolve } from "node:path";
import type { Command } from "commander";
import { ConfigurationError, configFromEnv, readDecimal, refusedStart, withoutPassword } from "../config.js";
import { InvalidRequest } from "../errors.js";
import { serveConfigFromEnv } from "../serve/config.js";
import { action, processIo, type CliIo } from "./io.js";
import type { RunOptions } from "../serve/run.js";
import type { StartChecks } from "../serve/before-stores.js";
import { openStore, SERVES, storeOption, storeOptionsGiven } from "./store-option.js";

export interface ServeOptions {
  port?: string;
  host?: string;
  store?: string;
  dataDir?: string;
  databaseUrl?: string;
  workers: string;
}

const portHint = (port: number) => `--port, e.g. cardflow serve --port ${port}`;

export function registerServe(program: Command, io: CliIo = processIo): void {
  program
    .command("serve")
    .summary("run the HTTP API (what npm start runs)")
    .description("serves the payment API, the web console, /healthz and /readyz, with metrics on METRICS_PORT; stops gracefully on SIGTERM or SIGINT. The environment configures it as it does npm start; an option wins over its variable.")
    .option("--port <port>", "the API's port (PORT, default 8080)")
    .option("--host <host>", "the address to bind (HOST, default 0.0.0.0)")
    .addOption(storeOption({ readOnly: false, readModels: true }))
    .option("--data-dir <dir>", "SQLite under this directory (like DATA_DIR; the same as --store sqlite:DIR/cardflow.sqlite)")
    .option("--database-url <url>", "PostgreSQL (like DATABASE_URL; the same as --store postgres:URL)")
    .option("--workers <n>", "processes sharing the port (node:cluster)", "1")
    .action(action(io, (opts: ServeOptions, command: Command) => serve(storeGiven(opts, command), { portHint, storeFrom: command.getOptionValueSource("store") === "env" ? "CARDFLOW_STORE" : "--store" })));
}

/**
 * The store the command line names wins over CARDFLOW_STORE (--store's variable), as every option
 * over its variable; two options naming it are refused.
 */
function storeGiven(opts: ServeOptions, command: Command): ServeOptions {
  const given = storeOptionsGiven(command, opts, ["store", "dataDir", "databaseUrl"] as const);
  const flag = (name: string) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  if (given.length > 1) throw new InvalidRequest(`${given.map(flag).join(" and ")} each name the store: give one of them`, given[1]!);
  if (given.length === 1 && given[0] !== "store") return { ...opts, store: undefined };
  return opts;
}

/** The served process with these options: `cardflow serve`, and `npm start` (src/main.ts: CARDFLOW_STORE as --store). */
export async function serve(opts: ServeOptions, hints: Pick<RunOptions, "portHint"> & { storeFrom?: string } = {}): Promise<void> {
  const workers = readDecimal(String(opts.workers));
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) throw new InvalidRequest(`--workers: expected a whole number from 1 to 64, got ${JSON.stringify(opts.workers)}`, "workers");
  const env = { ...process.env };
  if (opts.port !== undefined && !(/^\d{1,5}$/.test(opts.port) && Number(opts.port) <= 65535)) throw new InvalidRequest(`--port: expected a port number from 0 to 65535, got ${JSON.stringify(opts.port)}`, "port");
  // a refusal names the option, not the variable it is passed on as
  if (opts.port !== undefined) Object.assign(env, { PORT: opts.port, CARDFLOW_PORT_FROM: "--port" });
  if (opts.host !== undefined) Object.assign(env, { HOST: opts.host, CARDFLOW_HOST_FROM: "--host" });
  if (opts.dataDir !== undefined) Object.assign(env, { DATA_DIR: resolve(opts.dataDir), DATABASE_URL: "" });
  if (opts.databaseUrl !== undefined) Object.assign(env, { DATABASE_URL: opts.databaseUrl, CARDFLOW_DATABASE_URL_FROM: "--database-url" });
  // a store the environment can name is opened as npm start opens it (same files, same settings)
  const store = opts.store === undefined ? null : storeInEnv(opts.store, env, hints.storeFrom ?? "--store");
  // a setting that cannot work is refused as npm start refuses it (one form, exit 1), before a store is opened
  try {
    const { sandbox } = configFromEnv(env);
    serveConfigFromEnv(env);
    if (store === "memory" && !sandbox) throw new ConfigurationError(memoryInProduction(hints.storeFrom ?? "--store"));
  } catch (error) {
    refusedStart(error);
  }
  if (store === "memory" && workers > 1) throw new InvalidRequest(`${memoryFrom(hints.storeFrom ?? "--store")}: each worker would have a store of its own; use sqlite:PATH or postgres:URL with --workers`, "store");
  // loaded here: the server's modules (metrics, tracing) are no weight for the other commands
  if (workers > 1 && cluster.isPrimary) return (await import("../serve/cluster.js")).runPrimary(workers, env, hints.portHint ?? portHint);
  const { runService } = await import("../serve/run.js");
  // a store named by --store is opened here, before the service's own start: what a start refuses
  // before any store is made is refused here first (a worker's ports are its primary's)
  // (and not again by the service)
  let checked: StartChecks | undefined;
  if (store !== null) {
    const { refusalsBeforeStores, withPortHint } = await import("../serve/before-stores.js");
    const [config, serveConfig] = [configFromEnv(env), serveConfigFromEnv(env)];
    checked = await refusalsBeforeStores(config, serveConfig, { env, listeners: cluster.isPrimary }).catch(async (error: unknown) => refusedStart(await withPortHint(error, config, serveConfig, hints.portHint ?? portHint)));
  }
  // a store that cannot be opened stops the start as every other reason does (one line, exit 1)
  const stores = store === null ? undefined : await openStore(store, SERVES).then(({ store: events, readModels, description }) => ({ store: events, readModels: readModels!, description }), refusedStart);
  // a SQLite file of another name than cardflow.sqlite: the CLI's accounts find it by --store (CARDFLOW_STORE)
  const storeHint = store === null || store === "memory" ? undefined : `CARDFLOW_STORE=${store}`;
  await runService({ env, ...(stores ? { stores } : {}), ...(checked ? { checked } : {}), ...hints, ...(storeHint ? { storeHint } : {}), demoAccount: store === "memory" });
}

/** The memory store, named as it was given: --store memory, CARDFLOW_STORE=memory. */
const memoryFrom = (from: string) => (from.startsWith("--") ? `${from} memory` : `${from}=memory`);

/**
 * Real money in a store that ends with the process: at a restart the payments, the processor calls
 * the reconciler resolves and the Idempotency-Key records are gone, and a client's retry could charge again.
 */
const memoryInProduction = (from: string) =>
  `${memoryFrom(from)}: production needs a durable store: payments, processor calls left for the reconciler and Idempotency-Key records would live in this process's memory only, lost at a restart (a retry could charge again); use SQLite (DATA_DIR, or --store sqlite:PATH) or PostgreSQL (DATABASE_URL, or --store postgres:URL)`;

/**
 * Turns --store into the environment's terms where it can (postgres:URL is DATABASE_URL, a
 * cardflow.sqlite file is its DATA_DIR): null then. Else the spec to open: memory, or a SQLite file
 * of another name (its directory is the data directory unless DATA_DIR is set).
 */
function storeInEnv(spec: string, env: NodeJS.ProcessEnv, from: string): string | null {
  const url = spec.replace(/^postgres(ql)?:(?=postgres(ql)?:\/\/)/, "");
  if (/^postgres(ql)?:\/\//.test(url)) {
    env.DATABASE_URL = url;
    // a refusal names where the URL was given (the workers read it from their environment too)
    env.CARDFLOW_DATABASE_URL_FROM = from;
    return null;
  }
  if (spec.startsWith("sqlite:")) {
    if (spec === "sqlite:") throw new InvalidRequest("--store: sqlite:PATH needs a path", "store");
    const path = resolve(spec.slice("sqlite:".length));
    env.DATABASE_URL = "";
    if (basename(path) === "cardflow.sqlite") {
      env.DATA_DIR = dirname(path);
      return null;
    }
    env.DATA_DIR ||= dirname(path);
    return `sqlite:${path}`;
  }
  if (spec === "memory") return spec;
  const kind = spec.split(":")[0]!;
  if (kind === "postgres" || kind === "postgresql") throw new InvalidRequest(`${from}: postgres:URL needs a postgres:// URL, got ${JSON.stringify(withoutPassword(spec.slice(kind.length + 1)))}`, "store");
  // a kind the other commands open (an event store alone) is refused as such; another is unknown
  if (kind === "kurrentdb" || kind === "jsonl" || /^(kurrentdb|esdb)(\+discover)?:\/\//.test(spec)) {
    throw new InvalidRequest(`${from} ${kind}: serve needs read models beside its events: sqlite:PATH or postgres:URL (memory for a throwaway server)`, "store");
  }
  throw new InvalidRequest(`${from}: unknown store ${JSON.stringify(kind)}; use sqlite:PATH, postgres:URL or memory`, "store");
}
