// `npm start`: the HTTP API on PORT with the store (CARDFLOW_STORE, else DATABASE_URL, else SQLite
// under DATA_DIR), the processors (the simulators in the sandbox, PROCESSORS_MODULE's adapters in
// production), Prometheus metrics on METRICS_PORT, graceful stop on SIGTERM/SIGINT: the process
// `cardflow serve` runs (src/cli/serve.ts, src/serve/), with the environment's settings only.
import { serve } from "./cli/serve.js";

try {
  await serve();
} catch (error) {
  // a setting that cannot run (CARDFLOW_STORE naming no store...): one line, exit 1, as every refusal to start
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`cardflow: refusing to start: ${message.replace(/^--store\b/, "CARDFLOW_STORE")}\n`);
  process.exit(1);
}
