// `npm start`: the HTTP API on PORT with the store under DATA_DIR and the processor simulators.
// SIGTERM/SIGINT: stop accepting, let in-flight requests finish, close the store cleanly.
import { pino } from "pino";
import { systemClock } from "./clock.js";
import { configFromEnv, openStores } from "./config.js";
import { createEngine } from "./engine.js";
import { createServer } from "./http/server.js";
import { randomIds } from "./ids.js";
import { ledgerFileIn } from "./processors/ledger.js";
import { createSimulators } from "./processors/simulator.js";

const config = configFromEnv();
const logger = pino({ level: config.logLevel });
const clock = systemClock;
const ids = randomIds();
const { store, readModels, description } = await openStores(config);
const { captures, captureSettleMs, processorLatencyMs } = config;
const simulators = createSimulators({ clock, ids, captures, captureSettleMs, processorLatencyMs, ledgerFile: ledgerFileIn(config.dataDir) });
const reconcileGraceMs = Number(process.env.RECONCILE_GRACE_MS || 30_000);
const engine = createEngine({ store, readModels, processors: simulators, clock, ids, syncAuthTimeoutMs: config.syncAuthTimeoutMs, liveProjections: true, reconcileGraceMs });
const app = createServer({ engine, simulators, idempotencyTtlMs: config.idempotencyTtlMs, logger });

await app.listen({ port: config.port, host: config.host });
// processor calls a crash left without outcome: resolved at start-up, then on an interval
engine.startReconciler(Number(process.env.RECONCILE_INTERVAL_MS || 10_000), (pass) => {
  if (pass instanceof Error) logger.error({ err: pass }, "reconcile pass failed");
  else if (pass.found > 0) logger.info({ found: pass.found, resolved: pass.resolved.length, duration_ms: pass.duration_ms }, "reconciled open attempts");
});
const base = `http://localhost:${config.port}`;
logger.info({ port: config.port, store: description }, "cardflow listening");
process.stderr.write(
  `\ncardflow is listening on ${base} (store: ${description})\n` +
    `Create a merchant account and its API key (prints only the key):\n` +
    `  DATA_DIR=${config.dataDir} npx cardflow accounts create acct_demo --processor A\n` +
    `Then: curl -H "Authorization: Bearer <key>" "${base}/v2/hardware?external_account_id=acct_demo"\n` +
    `OpenAPI: ${base}/openapi.json\n\n`,
);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down: finishing in-flight requests");
  try {
    await app.close();
    await engine.close();
    logger.info("stopped");
    process.exit(0);
  } catch (err) {
    logger.error({ err }, "shutdown failed");
    process.exit(1);
  }
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
