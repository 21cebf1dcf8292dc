// The servers the HTTP benchmarks (scripts/bench/http.ts, http-postgres.ts) talk to, each in its
// own process:
//   real: the server as shipped (ROUND3-NOTES): src/main.ts, what `npm start` runs, with its
//         defaults (sandbox simulators, LOG_LEVEL info with a log line per request, metrics on a
//         port of their own, the tracing API without an SDK, keys' last-used recorded), on SQLite
//         under DATA_DIR or on PostgreSQL (DATABASE_URL + DATABASE_SCHEMA, a fresh schema). Before
//         it starts, this process opens the same store and the same simulated processors' side (as
//         `cardflow accounts create` would) and makes one account, its API key, a card on file and
//         one authorized payment to read; then it runs src/main.ts in this same process.
//   bare: a bare fastify route answering GET /v2/payment/intent/:id with the same JSON (BODY).
// Writes one line `READY {json}` on fd 3 (port, and key, account, payment for `real`); stdout takes
// the server's request log (the parent discards it).
import Fastify from "fastify";
import { writeSync } from "node:fs";
import { pino } from "pino";
import { createApiKeys } from "../../src/api-keys.js";
import { systemClock } from "../../src/clock.js";
import { configFromEnv, openStores } from "../../src/config.js";
import { createEngine } from "../../src/engine.js";
import { randomIds } from "../../src/ids.js";
import { serviceProcessors } from "../../src/processors/adapters.js";
import { freePort } from "../../test/support/postgres.js";
import { ACCOUNT, CUSTOMER, openBenchAccount } from "./flows.js";

const ready = (info: object) => writeSync(3, `READY ${JSON.stringify(info)}\n`);

const mode = process.argv[2];
if (mode === "bare") {
  const body = process.env.BODY!;
  const app = Fastify({ logger: false });
  app.get("/v2/payment/intent/:payment_id", async (_req, reply) => reply.type("application/json").send(body));
  await app.listen({ port: 0, host: "127.0.0.1" });
  process.on("SIGTERM", () => process.exit(0)); // an exit, so --cpu-prof writes its profile
  ready({ port: (app.server.address() as { port: number }).port });
} else {
  const port = await freePort();
  // shipped defaults but for where it listens and stores; metrics on a free port of their own; no grace at the stop
  Object.assign(process.env, { PORT: String(port), HOST: "127.0.0.1", METRICS_PORT: String(await freePort()), SHUTDOWN_GRACE_MS: "0" });
  const config = configFromEnv(process.env);
  const { store, readModels } = await openStores(config);
  const clock = systemClock;
  const ids = randomIds();
  const { processors, close } = await serviceProcessors(config, { clock, ids, store, logger: pino({ level: "silent" }) }); // the sandbox's: no adapter logs
  const engine = createEngine({ store, readModels, processors, clock, ids });
  const card = await openBenchAccount(engine);
  const { key } = await createApiKeys(engine).issue(ACCOUNT, "bench");
  const created = await engine.createIntent({ external_account_id: ACCOUNT, amount: "10.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: card, external_customer_id: CUSTOMER });
  await engine.authorize({ external_account_id: ACCOUNT, payment_id: created.payment_id });
  await engine.close();
  await close();
  await import("../../src/main.js"); // resolves once it listens; SIGTERM stops it (src/serve/shutdown.ts)
  ready({ port, key, account: ACCOUNT, customer: CUSTOMER, card, payment: created.payment_id });
}
