// `npm start`: the HTTP API on PORT with the store (DATABASE_URL, else SQLite under DATA_DIR), the
// processors (the simulators in the sandbox, PROCESSORS_MODULE's adapters in production),
// Prometheus metrics on METRICS_PORT, graceful stop on SIGTERM/SIGINT: the process
// `cardflow serve` runs too (src/serve/).
import { runService } from "./serve/run.js";

await runService();
