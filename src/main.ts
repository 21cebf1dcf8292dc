// `npm start`: the HTTP API on PORT with the store (DATABASE_URL, else SQLite under DATA_DIR) and
// the processor simulators.
// SIGTERM/SIGINT: stop accepting, let in-flight requests finish, close the store cleanly.
import { pino } from "pino";
import { systemClock } from "./clock.js";
import { configFromEnv, openStores, outboundOf, refuseToStart } from "./config.js";
import { createEngine } from "./engine.js";
import { registerConsole } from "./console/routes.js";
import { createServer } from "./http/server.js";
import { blockRequestIds, randomIds } from "./ids.js";
import { serviceProcessors } from "./processors/adapters.js";
import { withSeededDefect } from "./seeded-defects.js";
import { createWebhooks } from "./webhooks/index.js";
import { loadSigningKey, webhookConfigFromEnv } from "./webhooks/config.js";

// a configuration that cannot run (production without processor adapters...) stops here, said why
const config = await refuseToStart(() => configFromEnv());
const logger = pino({ level: config.logLevel });
const clock = systemClock;
// the chaos run's negative controls: a seeded defect, only in sandbox mode (src/seeded-defects.ts)
const { store, readModels, description } = withSeededDefect(await openStores(config), config);
// request ids unique across every process on this store (blocks reserved in it)
const ids = await blockRequestIds(randomIds(), (count) => store.reserveIds("request_id", count));
// sandbox: the simulators (their side shared by this host's processes); production: PROCESSORS_MODULE's adapters
const { processors, simulators, mode, close: closeProcessors } = await refuseToStart(() => serviceProcessors(config, { clock, ids }));
const engine = createEngine({ store, readModels, processors, clock, ids, syncAuthTimeoutMs: config.syncAuthTimeoutMs, liveProjections: true, reconcileGraceMs: config.reconcileGraceMs });
const webhookConfig = webhookConfigFromEnv();
const webhooks = createWebhooks({
  engine,
  signingKey: loadSigningKey(config.dataDir),
  ...webhookConfig,
  outbound: outboundOf(config),
  onError: (err) => logger.warn({ err }, "webhook delivery"),
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
  extensions: [registerConsole],
});

try {
  await app.listen({ port: config.port, host: config.host });
} catch (error) {
  // a port taken by another process is a setup problem to explain, not a crash to trace
  if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
  process.stderr.write(`cardflow: port ${config.port} on ${config.host} is already in use (another cardflow, or another service?); choose another with PORT, e.g. PORT=${config.port + 1} npm start\n`);
  await engine.close();
  process.exit(1);
}
await webhooks.delivery.start();
// processor calls a crash left without outcome: resolved at start-up, then on an interval
engine.startReconciler(config.reconcileIntervalMs, (pass) => {
  if (pass instanceof Error) logger.error({ err: pass }, "reconcile pass failed");
  else if (pass.found > 0) logger.info({ found: pass.found, resolved: pass.resolved.length, duration_ms: pass.duration_ms }, "reconciled open attempts");
});
const base = `http://localhost:${config.port}`;
logger.info({ port: config.port, store: description, sandbox: config.sandbox, mode }, "cardflow listening");
process.stderr.write(
  `\ncardflow is listening on ${base} (store: ${description}; mode: ${mode})\n` +
    `Create a merchant account and its API key (prints only the key):\n` +
    `  ${config.databaseUrl ? "DATABASE_URL=<the same URL>" : `DATA_DIR=${config.dataDir}`} npx cardflow accounts create acct_demo --exists-ok\n` +
    `Then: curl -H "Authorization: Bearer <key>" "${base}/v2/hardware?external_account_id=acct_demo"\n` +
    `OpenAPI: ${base}/openapi.json   Web console: ${base}/console\n\n`,
);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down: finishing in-flight requests");
  try {
    await app.close();
    await webhooks.delivery.stop();
    await engine.close();
    await closeProcessors();
    logger.info("stopped");
    process.exit(0);
  } catch (err) {
    logger.error({ err }, "shutdown failed");
    process.exit(1);
  }
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
