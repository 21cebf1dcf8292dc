// `cardflow serve --workers N`: N processes sharing the port (node:cluster; the primary accepts
// and hands connections round robin). Each worker is the whole served process (./run.ts) on the
// same store; the primary only supervises: it serves the workers' metrics summed on METRICS_PORT
// (./cluster-metrics.ts), relays SIGTERM/SIGINT to them (each stops gracefully,
// ./shutdown.ts; one still starting, serving nothing yet, is ended by SIGTERM), restarts a worker
// that dies (not more than 5 times a minute; never one that refused to go on: a sandbox worker that
// saw production on its store) and exits when they all have: 0 when every worker stopped cleanly.
import cluster, { type Worker } from "node:cluster";
import { clusterMetrics } from "./cluster-metrics.js";
import { configFromEnv, refusedStart } from "../config.js";
import { refusalsBeforeStores, withPortHint, type PortHint } from "./before-stores.js";
import { listenFailure, serveConfigFromEnv, urlOf } from "./config.js";
import { serviceLogger } from "../observability/redact.js";
import { stopWithParent } from "./parent.js";
import { warnSandboxOnly } from "./sandbox-only.js";
import { startMetricsServer, type MetricsServer } from "./metrics-server.js";
import { repeatsOfFirstSignal, WORKER_END_GRACE, WORKER_REFUSED_EXIT, WORKER_STOP } from "./shutdown.js";

/** What a worker says once it listens. */
export interface WorkerListening {
  cardflow: "listening";
  store: string;
  storeHint: string;
  port: number;
}

const isListening = (message: unknown): message is WorkerListening => (message as WorkerListening | null)?.cardflow === "listening";

const RESTARTS_PER_MINUTE = 5;

export async function runPrimary(workers: number, env: NodeJS.ProcessEnv, portHint: PortHint): Promise<void> {
  const say = (line: string) => process.stderr.write(`cardflow: ${line}\n`);
  // a configuration that cannot run stops here, said why (the workers would each say it again)
  let serve: ReturnType<typeof serveConfigFromEnv>;
  let host: string;
  try {
    const config = configFromEnv(env);
    host = config.host;
    serve = serveConfigFromEnv(env, config.port);
    warnSandboxOnly(config, env, serviceLogger(config.logLevel));
    // and before any worker makes a store: the API's port (the primary listens on the metrics port itself, below)
    await refusalsBeforeStores(config, { ...serve, metricsPort: 0 }, { env }).catch(async (error: unknown) => Promise.reject(await withPortHint(error, config, serve, portHint)));
  } catch (error) {
    return refusedStart(error);
  }
  /** Workers that said they listen (their handlers are installed): a stop is their word to stop gracefully. */
  const listeners = new Set<Worker>();
  const live = (): Worker[] => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
  let started = false;
  let stopping = false;
  let failed = false;
  const deaths: number[] = [];
  let metrics: MetricsServer | null = null;
  const exit = () => void Promise.resolve(metrics?.close()).finally(() => process.exit(failed ? 1 : 0));

  // the handlers come before anything listens: a signal from then on stops it cleanly (one before
  // the first fork ends the primary at once)
  const repeatsFirst = repeatsOfFirstSignal();
  const onSignal = (signal: NodeJS.Signals) => {
    const repeat = repeatsFirst();
    if (!stopping) return stopAll(signal);
    // the group's signal forwarded by npm too is no second one
    if (repeat) return;
    // a second signal: the workers end their grace now
    for (const worker of live()) if (worker.isConnected()) worker.send(WORKER_END_GRACE);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);

  if (serve.metricsPort !== 0) {
    const summed = clusterMetrics();
    // a worker answers the primary's scrape once it listens (its registry is set up then): until every
    // live one does (start-up, a restart), the scrape would wait for it and time out after 5 s
    const scrape = { ...summed, ready: () => live().every((w) => listeners.has(w)) };
    metrics = await startMetricsServer(serve.metricsPort, serve.metricsHost, scrape, (error) => say(`metrics: ${String(error)}`)).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") return refusedStart(listenFailure(error, ["METRICS_HOST", serve.metricsHost], ["METRICS_PORT", serve.metricsPort]));
      return refusedStart(`METRICS_PORT ${serve.metricsPort} on ${serve.metricsHost} is already in use (another cardflow on this host?); give each cardflow its own METRICS_PORT, or METRICS_PORT=0 for none`);
    });
  }

  const fork = () => {
    const worker = cluster.fork(env);
    return worker.on("message", (message: unknown) => {
      if (!isListening(message)) return;
      listeners.add(worker);
      if (started || listeners.size < workers) return;
      started = true;
      const base = urlOf(host, message.port);
      process.stderr.write(
        `\ncardflow is listening on ${base} with ${workers} worker processes (store: ${message.store})\n` +
          `Create a merchant account and its API key: ${message.storeHint} npx cardflow accounts create acct_demo --exists-ok\n` +
          `OpenAPI: ${base}/openapi.json   Web console: ${base}/console` +
          (metrics ? `   Metrics (every worker): http://${["0.0.0.0", "::"].includes(serve.metricsHost) ? "localhost" : serve.metricsHost}:${metrics.port}/metrics` : "") +
          "\n\n",
      );
    });
  };

  function stopAll(reason: string) {
    if (stopping) return;
    stopping = true;
    if (live().length === 0) return exit();
    say(`stopping ${live().length} worker(s): ${reason}`);
    for (const worker of live()) {
      // a worker still starting has no handler for the word yet (it would be lost): the signal
      // ends it, serving nothing yet
      if (!listeners.has(worker)) worker.process.kill("SIGTERM");
      else if (worker.isConnected()) worker.send(WORKER_STOP);
    }
    // each worker keeps its own deadline; this one ends the ones that could not
    setTimeout(() => {
      for (const worker of live()) worker.process.kill("SIGKILL");
      failed = true;
    }, serve.shutdownDeadlineMs + 2_000).unref();
  }

  cluster.on("exit", (worker, code, signal) => {
    const listened = listeners.delete(worker);
    // a sandbox worker that saw a production process on its store said why: another would too
    if (code === WORKER_REFUSED_EXIT) stopAll("a production process counted itself on the sandbox's store");
    if (!stopping) {
      if (!started) {
        // a worker that cannot start (a port in use, a store that does not open) said why: the others will not do better
        failed = true;
        for (const other of live()) other.process.kill("SIGTERM");
        return stopAll(`a worker exited before every worker listened (exit code ${code ?? signal})`);
      }
      const now = Date.now();
      deaths.push(now);
      while (deaths[0]! < now - 60_000) deaths.shift();
      if (deaths.length > RESTARTS_PER_MINUTE) {
        failed = true;
        return stopAll(`${deaths.length} workers died within a minute`);
      }
      say(`worker ${worker.process.pid} exited (${code ?? signal}); starting another`);
      fork();
      return;
    }
    // a worker ended by the stop's SIGTERM while it still started stopped cleanly
    if (code !== 0 && !(signal === "SIGTERM" && !listened)) failed = true;
    // (no metrics listener, METRICS_PORT=0: metrics?.close() is nothing, and the exit still comes)
    if (live().length === 0) exit();
  });

  // under npx the workers' parent is this primary: it is the one that must notice npm is gone
  stopWithParent(env);
  for (let i = 0; i < workers && !stopping; i++) fork();
}
