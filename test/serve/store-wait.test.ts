// A process started while its database cannot be reached (a failover, a database restarting while a
// supervisor restarts the process) waits for it, saying so, and serves once it answers: it does not
// die (a --workers primary gives up after five deaths in a minute). Past STORE_START_WAIT_SECONDS it
// refuses to start, as before. The database "comes back" as a TCP relay opened later on the port the
// process was given, to a real PostgreSQL.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, testDatabase } from "../support/postgres.js";
import { SERVER_NODE_ARGS } from "../support/server-args.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-store-wait-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const database = new URL(await testDatabase());

function serverOn(relayPort: number, env: Record<string, string> = {}) {
  const url = new URL(database.href);
  url.host = `127.0.0.1:${relayPort}`;
  return freePort().then((port) => {
    const child = spawn(process.execPath, [...SERVER_NODE_ARGS, "src/main.ts"], {
      env: { ...process.env, DATABASE_URL: url.href, DATABASE_SCHEMA: `wait_${relayPort}`, PORT: String(port), HOST: "127.0.0.1", METRICS_PORT: "0", LOG_LEVEL: "info", DATA_DIR: mkdtempSync(join(dir, "data-")), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    return { child, port, exited, output: () => output };
  });
}

describe("a start while the database cannot be reached", () => {
  it("waits for it, saying so, and serves once it answers", { timeout: 120_000 }, async () => {
    const relayPort = await freePort();
    const server = await serverOn(relayPort);
    const sockets: Socket[] = [];
    const relay = createServer((client) => {
      const upstream = connect(Number(database.port), database.hostname);
      sockets.push(client, upstream);
      client.pipe(upstream).pipe(client);
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
    });
    try {
      await expect.poll(server.output, { timeout: 60_000 }).toContain("waiting for the store at start");
      expect(server.child.exitCode).toBeNull();
      // the database comes back
      await new Promise<void>((resolve) => relay.listen(relayPort, "127.0.0.1", () => resolve()));
      await expect.poll(() => fetch(`http://127.0.0.1:${server.port}/readyz`).then((r) => r.status, () => 0), { timeout: 60_000, interval: 200 }).toBe(200);
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
      relay.close();
      for (const s of sockets) s.destroy();
    }
  });

  it("refuses to start once STORE_START_WAIT_SECONDS is over, one line and exit 1", { timeout: 120_000 }, async () => {
    const server = await serverOn(await freePort(), { STORE_START_WAIT_SECONDS: "2" });
    expect(await server.exited).toBe(1);
    expect(server.output()).toContain("waiting for the store at start");
    // naming the variable and its URL (password masked), and how long it waited
    expect(server.output()).toMatch(/cardflow: refusing to start: DATABASE_URL: PostgreSQL postgres:\/\/\w+:\*\*\*@127\.0\.0\.1:\d+\/\w+ cannot be reached \(connect ECONNREFUSED 127\.0\.0\.1:\d+\); waited 2 s for it \(STORE_START_WAIT_SECONDS\)\n/);
  });
});
