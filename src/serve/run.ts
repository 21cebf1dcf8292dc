// Runs the served process: `npm start` (src/main.ts) and `cardflow serve` (src/cli/serve.ts) both
// come here, the CLI with its options already turned into the environment's terms. Logs are pino
// JSON lines on stdout (LOG_LEVEL); what a person starting it needs to know goes to stderr.
import cluster from "node:cluster";
import { AggregatorRegistry } from "prom-client";
import type { Logger } from "pino";
import { configFromEnv, refusedStart, type Stores } from "../config.js";
import { serveConfigFromEnv, urlOf } from "./config.js";
import type { WorkerListening } from "./cluster.js";
import { createApiKeys } from "../api-keys.js";
import type { Engine } from "../engine.js";
import { withPortHint, type PortHint, type StartChecks } from "./before-stores.js";
import { startService } from "./service.js";
import { stopWithParent } from "./parent.js";
import { stopOnSignals, WORKER_REFUSED_EXIT } from "./shutdown.js";
import { serviceLogger } from "../observability/redact.js";
import { warnSandboxOnly } from "./sandbox-only.js";

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** Opened by `serve --store`, after the refusals before any store (their findings: `checked`). */
  stores?: Stores;
  checked?: StartChecks;
  /** How the person starting it changes the port, for the message when it is taken (`port`: a free one to give as the example). */
  portHint?: PortHint;
  /** The environment line of the banner's `accounts create` hint (default: DATABASE_URL or DATA_DIR). */
  storeHint?: string;
  /**
   * A store only this process holds (`--store memory`): no other process can open its accounts, so
   * it opens acct_demo and the banner prints its API key.
   */
  demoAccount?: boolean;
}

const npmPortHint: PortHint = (port) => `PORT, e.g. PORT=${port} npm start`;

export async function runService({ env = process.env, stores, checked, portHint = npmPortHint, storeHint, demoAccount = false }: RunOptions = {}): Promise<void> {
  let config: ReturnType<typeof configFromEnv>;
  let serve: ReturnType<typeof serveConfigFromEnv>;
  let logger: Logger;
  try {
    // a configuration that cannot run (production without processor adapters...) stops here, said why
    config = configFromEnv(env);
    serve = serveConfigFromEnv(env, config.port);
    logger = serviceLogger(config.logLevel);
  } catch (error) {
    return refusedStart(error);
  }
  const worker = cluster.isWorker;
  // said once: by the primary of `serve --workers` (./cluster.ts), not by each worker
  if (!worker) warnSandboxOnly(config, env, logger);
  // a stop asked while the process starts (opening the store, migrating, waiting for it): nothing
  // was served, and what the start wrote is crash-safe, so the process ends at once, exit 0,
  // rather than by the signal (which a supervisor reads as a crash)
  const stopWhileStarting = (signal: NodeJS.Signals) => {
    logger.info({ reason: signal }, "stopped while starting: nothing was served");
    process.exit(0);
  };
  process.once("SIGTERM", stopWhileStarting).once("SIGINT", stopWhileStarting);
  // a sandbox on whose store a production process counted itself ends at once, as a refused start
  // does (in-flight requests are cut: no processor call, no reconciler decision after it); a worker
  // with the code that tells the primary not to start another
  const onProduction = (refusal: Error) => {
    logger.fatal({ reason: "production" }, refusal.message);
    process.stderr.write(`cardflow: ${refusal.message}\n`);
    process.exit(worker ? WORKER_REFUSED_EXIT : 1);
  };
  let service: Awaited<ReturnType<typeof startService>>;
  try {
    service = await startService({ config, serve, logger, ...(stores ? { stores } : {}), ...(checked ? { checked } : {}), clusterWorker: worker, onProduction });
  } catch (error) {
    // whatever stops the start (a store that cannot be opened, an address that cannot be bound, a
    // setting a library refuses) is one line and exit 1, which a supervisor and a person both read
    return refusedStart(await withPortHint(error, config, serve, portHint));
  } finally {
    process.off("SIGTERM", stopWhileStarting).off("SIGINT", stopWhileStarting);
  }
  stopOnSignals(service, serve, logger);
  stopWithParent(env);
  logger.info({ port: service.port, store: service.description, sandbox: config.sandbox, mode: service.mode, metrics: service.metricsUrl }, "cardflow listening");
  const hint = storeHint ?? (config.databaseUrl ? "DATABASE_URL=<the same URL>" : `DATA_DIR=${config.dataDir}`);
  if (worker) {
    // the primary serves every worker's metrics from one listener (constructing an
    // AggregatorRegistry is what makes a worker answer its requests), and prints the banner once
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([service.metrics.registry]);
    const listening: WorkerListening = { cardflow: "listening", store: `${service.description}; mode: ${service.mode}`, storeHint: hint, port: service.port };
    process.send?.(listening);
    return;
  }
  const demoKey = demoAccount ? await openDemoAccount(service.engine) : undefined;
  process.stderr.write(banner(urlOf(config.host, service.port), `${service.description}; mode: ${service.mode}`, hint, service.metricsUrl, demoKey));
}

/** acct_demo (processor A, USD) in the served store, and a new API key of it. */
async function openDemoAccount(engine: Engine): Promise<string> {
  await engine.openAccount({ external_account_id: "acct_demo", processor: "A" }, { actor: "cli" });
  return (await createApiKeys(engine).issue("acct_demo", "cli")).key;
}

export function banner(base: string, store: string, storeHint: string, metricsUrl: string | null, demoKey?: string): string {
  return (
    `\ncardflow is listening on ${base} (store: ${store})\n` +
    (demoKey
      ? `A merchant account acct_demo and its API key (the store is this process's memory: no other process can open an account in it):\n  ${demoKey}\n`
      : `Create a merchant account and its API key (prints only the key):\n  ${storeHint} npx cardflow accounts create acct_demo --exists-ok\n`) +
    `Then: curl -H "Authorization: Bearer ${demoKey ?? "<key>"}" "${base}/v2/hardware?external_account_id=acct_demo"\n` +
    `OpenAPI: ${base}/openapi.json   Web console: ${base}/console` +
    (metricsUrl ? `   Metrics: ${metricsUrl}` : "") +
    "\n\n"
  );
}
