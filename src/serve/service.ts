// The served process, composed once for `npm start` and `cardflow serve` (each worker of
// `--workers N` too): the stores, the engine over instrumented ports, the webhooks, the HTTP API,
// the reconciler, the metrics listener and the tracing SDK. stop() is the graceful stop that
// ./shutdown.ts drives.
import type { Logger } from "pino";
import { systemClock } from "../clock.js";
import { openStores, type ServiceConfig, type Stores } from "../config.js";
import type { ReconcileReport } from "../engine.js";
import { registerConsole } from "../console/routes.js";
import { createServer } from "../http/server.js";
import { StoreOpenFailed } from "../store/port/unavailable.js";
import { randomIds, storeRequestIds } from "../ids.js";
import { createObservedEngine } from "../observability/index.js";
import type { Metrics } from "../observability/metrics.js";
import { startTracingFromEnv } from "../observability/otel-sdk.js";
import { registerServiceGauges } from "./service-gauges.js";
import { adapterState, serviceProcessors } from "../processors/adapters.js";
import { withSeededDefect } from "../seeded-defects.js";
import { createWebhooks } from "../webhooks/index.js";
import { loadSigningKey } from "../webhooks/config.js";
import { apiRefusal, metricsRefusal, refusalsBeforeStores, StartFailure, type StartChecks } from "./before-stores.js";
import { urlOf, type ServeConfig } from "./config.js";
import { startMetricsServer, type MetricsServer } from "./metrics-server.js";

export interface ServiceOptions {
  config: ServiceConfig;
  serve: ServeConfig;
  logger: Logger;
  /** Already opened (`serve --store`); default: the configuration's (DATABASE_URL, else DATA_DIR). */
  stores?: Stores;
  /** What the refusals before any store found, when they ran before `stores` were opened (`serve --store`): not run again. */
  checked?: StartChecks;
  /** A worker of `serve --workers`: its metrics are served by the primary, not on a listener of its own. */
  clusterWorker?: boolean;
  /** A sandbox's end once a production process counts itself on its store (src/processors/production-mark.ts): ends the process. */
  onProduction?: (refusal: Error) => void;
}


/**
 * The stores, waiting up to `waitSeconds` for a database that cannot be reached (a failover, a
 * database restarting while a supervisor restarts this process): said in the log, tried again every
 * few seconds. Past it, or for anything else (a wrong password, a missing database), the start is
 * refused. A stop signal meanwhile ends the start (./run.ts).
 */
async function openWaiting(config: ServiceConfig, waitSeconds: number, logger: Logger): Promise<Stores> {
  const deadline = Date.now() + waitSeconds * 1_000;
  for (let pauseMs = 500; ; pauseMs = Math.min(2 * pauseMs, 5_000)) {
    try {
      return await openStores(config);
    } catch (error) {
      if (!(error instanceof StoreOpenFailed && error.unavailable)) throw error;
      if (Date.now() + pauseMs > deadline) throw waitSeconds > 0 ? new StartFailure(`${error.message}; waited ${waitSeconds} s for it (STORE_START_WAIT_SECONDS)`) : error;
      logger.warn({ err: error, retry_in_ms: pauseMs, gives_up_in_s: Math.round((deadline - Date.now()) / 1_000) }, "waiting for the store at start (STORE_START_WAIT_SECONDS)");
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}

export async function startService({ config, serve, logger, stores, checked, clusterWorker = false, onProduction }: ServiceOptions) {
  // a worker's ports are its primary's, checked by it before any worker started (./cluster.ts)
  const { webhookSettings, outbound } = checked ?? (await refusalsBeforeStores(config, serve, { listeners: !clusterWorker }));
  const tracing = await startTracingFromEnv();
  const clock = systemClock;
  // the chaos run's negative controls: a seeded defect, only in sandbox mode (src/seeded-defects.ts)
  const { store, readModels, description } = withSeededDefect(stores ?? (await openWaiting(config, serve.storeStartWaitSeconds, logger)), config);
  // request ids unique across every process on this store (blocks reserved in it)
  const ids = await storeRequestIds(randomIds(), store);
  // sandbox: the simulators (their side shared by this host's processes); production: PROCESSORS_MODULE's adapters
  const { processors, simulators, mode, watch, close: closeProcessors } = await serviceProcessors(config, { clock, ids, store, logger, state: adapterState(readModels), ...(onProduction ? { onProduction } : {}) });
  const { engine, metrics, notes } = createObservedEngine(
    { store, readModels, processors, clock, ids, syncAuthTimeoutMs: config.syncAuthTimeoutMs, liveProjections: true, reconcileGraceMs: config.reconcileGraceMs },
    { defaults: true },
  );
  const webhooks = createWebhooks({
    engine,
    signingKey: loadSigningKey(config.dataDir),
    ...webhookSettings,
    outbound,
    onError: (err) => logger.warn({ err }, "webhook delivery"),
    // one line per change of an endpoint's health, never one per failed attempt
    onNotice: (notice) =>
      notice.change === "closed"
        ? logger.info(notice, "webhook endpoint answers again: deliveries resume")
        : logger.warn(notice, notice.change === "opened" ? "webhook endpoint failing: deliveries paused, retried with backoff" : "webhook endpoint marked failing after the retry horizon: no more deliveries until a retry enables it"),
  });
  // the simulators' test helpers (/sim/*) are served in the sandbox only
  const app = createServer({
    engine,
    ...(simulators ? { simulators } : {}),
    webhooks,
    idempotencyTtlMs: config.idempotencyTtlMs,
    idempotencyMaxKeysPerAccount: config.idempotencyMaxKeysPerAccount,
    // a claim outlives the longest request: the blocking auth
    idempotencyLeaseMs: Math.max(180_000, config.syncAuthTimeoutMs + 60_000),
    trustProxy: config.trustProxy,
    logger,
    metrics,
    notes,
    readiness: { maxLagSeconds: serve.readyMaxLagSeconds },
    extensions: [registerConsole],
  });
  registerServiceGauges(metrics, { engine, drain: app.drain });

  const closeStores = async (step?: (part: string) => void, by = Infinity) => {
    await engine.close(step, by);
    step?.("closing the processors' clients");
    await closeProcessors();
  };
  let metricsServer: MetricsServer | null = null;
  if (!clusterWorker && serve.metricsPort !== 0) {
    const scrape = { contentType: metrics.registry.contentType, metrics: () => metrics.registry.metrics() };
    metricsServer = await startMetricsServer(serve.metricsPort, serve.metricsHost, scrape, (err) => logger.warn({ err }, "metrics collection failed")).catch(async (error: unknown) => {
      await closeStores();
      throw metricsRefusal(error, serve);
    });
  }
  // the delivery starts in the background: it waits a store outage out (or a feed that cannot
  // catch up), and the API must answer meanwhile (/healthz, and 503 with Retry-After)
  const delivering = webhooks.delivery.start().catch((err: unknown) => logger.error({ err }, "webhook delivery did not start"));
  /** The delivery stopped, then the stores closed; a start still waiting (on the read models' first catch-up) ends with them. */
  const stopDeliveryAndStores = async (step: (part: string) => void = () => undefined, by = Infinity) => {
    step("stopping the webhook delivery");
    await webhooks.delivery.stop(by);
    await closeStores(step, by);
    step("the webhook delivery's start");
    await delivering;
  };
  // listening comes last, with nothing of the start-up left to await after it: whoever saw /healthz
  // answer finds the signal handlers installed (runService installs them in the same turn), so a
  // SIGTERM then is the graceful stop, not the default death of a process still starting
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await stopDeliveryAndStores();
    await metricsServer?.close();
    // a port taken by another process is a setup problem to explain, not a crash to trace
    throw apiRefusal(error, config, serve);
  }
  // processor calls a crash left without outcome: resolved at start-up, then on an interval
  engine.startReconciler(config.reconcileIntervalMs, (pass) => {
    observePass(metrics, pass);
    if (pass instanceof Error) return logger.error({ err: pass }, "reconcile pass failed");
    // each call it could not resolve (its processor's lookup failing): the others were resolved all the same
    for (const f of pass.failed) logger.error({ payment_id: f.payment_id, attempt_id: f.attempt_id, open: f.open, error: f.error }, "reconcile could not resolve an open call: tried again next pass");
    if (pass.found > 0) logger.info({ found: pass.found, resolved: pass.resolved.length, failed: pass.failed.length, duration_ms: pass.duration_ms }, "reconciled open attempts");
  }, watch?.check);

  return {
    app,
    engine,
    metrics,
    description,
    /** The port it listens on (the one the system chose for PORT=0). */
    port: (app.server.address() as { port: number }).port,
    /** sandbox, or production (adapters: <module>). */
    mode,
    /** Where /metrics is served (null: METRICS_PORT=0, or a worker's, served by the primary). */
    metricsUrl: metricsServer ? urlOf(serve.metricsHost, metricsServer.port, "/metrics") : null,
    /**
     * After the HTTP server closed: webhook state flushed, reconciler pass awaited, store closed,
     * spans exported. `step` hears each part as it begins (a stop that hangs says where); webhook
     * posts in flight are awaited until `by` (the stop's deadline less its margin), then left.
     */
    async stopBackground(step: (part: string) => void = () => undefined, by = Infinity): Promise<void> {
      await stopDeliveryAndStores(step, by);
      step("closing the metrics listener");
      await metricsServer?.close();
      step("exporting the last spans");
      await tracing?.shutdown();
    },
  };
}

export type Service = Awaited<ReturnType<typeof startService>>;

function observePass(metrics: Metrics, pass: ReconcileReport | Error) {
  if (pass instanceof Error) return metrics.reconcilePasses.labels("failed").inc();
  metrics.reconcilePasses.labels(pass.failed.length > 0 ? "failed" : "ok").inc();
  metrics.reconcileResolved.inc(pass.resolved.length);
  metrics.reconcileOpen.set(pass.waiting);
  metrics.reconcileOldest.set(pass.oldest_open_ms / 1000);
}
