// The servers the HTTP benchmark (scripts/bench/http.ts) talks to, each in its own process:
//   real: cardflow's HTTP API (src/http) over the engine on a SQLite store in a temp dir (or on
//         PostgreSQL when DATABASE_URL is set: a fresh schema), with one account, its API key and
//         one authorized payment to read;
//   bare: a bare fastify route answering GET /v2/payment/intent/:id with the same JSON (BODY).
// Prints one line `READY {json}` with the port (and key, account, payment for `real`).
import Fastify from "fastify";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiKeys } from "../../src/api-keys.js";
import { createEngine } from "../../src/engine.js";
import { createServer } from "../../src/http/server.js";
import { createPostgresStore } from "../../src/store/postgres/index.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { ACCOUNT, CUSTOMER, openBenchAccount } from "./flows.js";

const mode = process.argv[2];
if (mode === "bare") {
  const body = process.env.BODY!;
  const app = Fastify({ logger: false });
  app.get("/v2/payment/intent/:payment_id", async (_req, reply) => reply.type("application/json").send(body));
  await app.listen({ port: 0, host: "127.0.0.1" });
  process.on("SIGTERM", () => process.exit(0)); // an exit, so --cpu-prof writes its profile
  console.log(`READY ${JSON.stringify({ port: (app.server.address() as { port: number }).port })}`);
} else {
  const work = mkdtempSync(join(tmpdir(), "cardflow-http-"));
  const url = process.env.DATABASE_URL;
  const { events, readModels } = url
    ? await createPostgresStore({ connectionString: url, schema: `bench_${randomUUID().replaceAll("-", "").slice(0, 10)}` })
    : createSqliteStore({ path: join(work, "events.db") });
  const engine = createEngine({ store: events, readModels, liveProjections: true });
  const card = await openBenchAccount(engine);
  const { key } = await createApiKeys(engine).issue(ACCOUNT, "bench");
  const created = await engine.createIntent({ external_account_id: ACCOUNT, amount: "10.00", payment_method_types: "card", capture_method: "automatic", payment_method_id: card, external_customer_id: CUSTOMER });
  await engine.authorize({ external_account_id: ACCOUNT, payment_id: created.payment_id });
  const app = createServer({ engine });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const stop = async () => {
    await app.close();
    await engine.close();
    rmSync(work, { recursive: true, force: true });
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  console.log(`READY ${JSON.stringify({ port: (app.server.address() as { port: number }).port, key, account: ACCOUNT, customer: CUSTOMER, card, payment: created.payment_id })}`);
}
