// `npm start`: the HTTP API on PORT with the store (CARDFLOW_STORE, else DATABASE_URL, else SQLite
// under DATA_DIR), the processors (the simulators in the sandbox, PROCESSORS_MODULE's adapters in
// production), Prometheus metrics on METRICS_PORT, graceful stop on SIGTERM/SIGINT: the process
// `cardflow serve` runs (src/cli/serve.ts, src/serve/), with the environment's settings only.
import { isAbsolute, resolve } from "node:path";
import { serve } from "./cli/serve.js";
import { refusedStart } from "./config.js";

// npm runs `npm start` in the package's folder: a relative DATA_DIR or CARDFLOW_STORE=sqlite:PATH is
// the folder's it was typed in (INIT_CWD), as for `npx cardflow` there (run from a subfolder, the two
// opened different stores)
const typedIn = process.env.INIT_CWD ?? "";
if (process.env.DATA_DIR) process.env.DATA_DIR = resolve(typedIn, process.env.DATA_DIR);
const sqlitePath = /^sqlite:(.+)$/.exec(process.env.CARDFLOW_STORE ?? "")?.[1];
if (sqlitePath && !isAbsolute(sqlitePath)) process.env.CARDFLOW_STORE = `sqlite:${resolve(typedIn, sqlitePath)}`;

// empty or blank: unset, as for every cardflow command (src/cli/index.ts)
const store = process.env.CARDFLOW_STORE?.trim() || undefined;
// a store that cannot be opened is a refusal to start like any other (named as the variable it came from)
await serve({ workers: "1", ...(store ? { store } : {}) }, { storeFrom: "CARDFLOW_STORE" }).catch((error: unknown) =>
  refusedStart(error instanceof Error ? new Error(error.message.replace(/^--store\b/, "CARDFLOW_STORE")) : error),
);
