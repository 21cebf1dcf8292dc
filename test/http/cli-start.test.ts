// `npm start` on a port another process holds: a clear message naming the port and how to choose
// another, in the one form every refusal to start takes, a non-zero exit, no stack trace.
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SERVER_NODE_ARGS } from "../support/server-args.js";

describe("npm start", () => {
  it("says the port is in use and how to choose another (a port free now that is not its METRICS_PORT: the next one is held too), exits non-zero, no stack trace", async () => {
    // two ports in a row held (the next one is what a second server's metrics often take)
    const listen = (port: number) =>
      new Promise<ReturnType<typeof createServer> | null>((resolve) => {
        const server = createServer().once("error", () => resolve(null));
        server.listen(port, "127.0.0.1", () => resolve(server));
      });
    let holder = createServer();
    let next: ReturnType<typeof createServer> | null = null;
    for (let tries = 0; !next; tries++) {
      if (tries > 0) holder.close();
      holder = createServer();
      await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
      next = await listen((holder.address() as { port: number }).port + 1);
    }
    const { port } = holder.address() as { port: number };
    const dataDir = await mkdtemp(join(tmpdir(), "cardflow-start-"));
    try {
      const child = spawn(process.execPath, [...SERVER_NODE_ARGS, "src/main.ts"], {
        env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, METRICS_PORT: String(port + 2) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      expect(code).not.toBe(0);
      const said = /^cardflow: refusing to start: port (\d+) on 127\.0\.0\.1 is already in use \(another cardflow, or another service\?\); choose another with PORT, e\.g\. PORT=(\d+) npm start\n$/.exec(stderr);
      expect(said, stderr).not.toBeNull();
      expect(Number(said![1])).toBe(port);
      // refused before any store is opened: the data directory holds nothing of it
      expect(readdirSync(dataDir)).toEqual([]);
      // past the two held and the process's own METRICS_PORT (port + 2), and free
      expect(Number(said![2])).toBeGreaterThanOrEqual(port + 3);
      const suggested = await listen(Number(said![2]));
      expect(suggested).not.toBeNull();
      suggested!.close();
    } finally {
      holder.close();
      next.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("a start refused by a setting read once the stores are open", () => {
  // each was refused only after a whole new store was made (SQLite files, the simulators' ledger),
  // which a later read-only command read as an empty, clean store
  it.each([
    ["WEBHOOK_SIGNING_KEY not hex of 32 bytes", { WEBHOOK_SIGNING_KEY: "abcd" }, /WEBHOOK_SIGNING_KEY: expected at least 32 bytes as hex/],
    ["WEBHOOK_TIMEOUT_MS of 0", { WEBHOOK_TIMEOUT_MS: "0" }, /WEBHOOK_TIMEOUT_MS/],
    ["OUTBOUND_CA_FILE that is not there", { OUTBOUND_CA_FILE: "/nonexistent/ca.pem" }, /OUTBOUND_CA_FILE: cannot read \/nonexistent\/ca\.pem/],
    ["PROCESSORS_MODULE in the sandbox", { PROCESSORS_MODULE: "./examples/processors.js" }, /PROCESSORS_MODULE: the sandbox runs the simulated processors/],
    ["production without PROCESSORS_MODULE", { SANDBOX: "off" }, /production mode \(SANDBOX=off\) runs no simulated processor/],
    ["a PROCESSORS_MODULE that cannot be loaded", { SANDBOX: "off", PROCESSORS_MODULE: "./nowhere/processors.js" }, /PROCESSORS_MODULE: cannot load \.\/nowhere\/processors\.js/],
    // only the named export counts: a default one is whatever a package exports first (fastify was called as createProcessors)
    ["a PROCESSORS_MODULE whose factory is its default export", { SANDBOX: "off", PROCESSORS_MODULE: "test/fixtures/processors/default-export.mjs" }, /PROCESSORS_MODULE: test\/fixtures\/processors\/default-export\.mjs exports no createProcessors\(context\) function \(a default export is not taken: export it by that name\)\n$/],
    ["a package as PROCESSORS_MODULE that exports no createProcessors", { SANDBOX: "off", PROCESSORS_MODULE: "fastify" }, /PROCESSORS_MODULE: fastify exports no createProcessors\(context\) function/],
  ])("%s: exit 1, one line naming it, nothing made in DATA_DIR", async (_, settings, said) => {
    const dataDir = await mkdtemp(join(tmpdir(), "cardflow-start-"));
    try {
      const child = spawn(process.execPath, [...SERVER_NODE_ARGS, "src/main.ts"], {
        env: { ...process.env, PORT: "0", METRICS_PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, NODE_ENV: "", ...settings },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      expect([code, stderr.split("\n").filter(Boolean).length]).toEqual([1, 1]);
      expect(stderr).toMatch(/^cardflow: refusing to start: /);
      expect(stderr).toMatch(said);
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("npm start from a folder of the package", () => {
  it.each([
    ["DATA_DIR", { DATA_DIR: "rel/data" }, "rel/data/cardflow.sqlite"],
    ["CARDFLOW_STORE=sqlite:PATH", { CARDFLOW_STORE: "sqlite:rel/other.sqlite" }, "rel/other.sqlite"],
    // a blank CARDFLOW_STORE is unset, as for every cardflow command (it was an unknown store "  ")
    ["DATA_DIR beside a blank CARDFLOW_STORE", { CARDFLOW_STORE: "  ", DATA_DIR: "rel/data" }, "rel/data/cardflow.sqlite"],
  ])("takes a relative %s from that folder, as npx cardflow there does (npm runs the script in the package's folder)", async (_, settings, file) => {
    const root = new URL("../..", import.meta.url).pathname;
    const folder = await mkdtemp(join(root, ".tmp", "start-from-"));
    try {
      const child = spawn("npm", ["start"], { cwd: folder, env: { ...process.env, PORT: "0", METRICS_PORT: "0", HOST: "127.0.0.1", DATA_DIR: "", CARDFLOW_STORE: "", ...settings, SHUTDOWN_GRACE_MS: "0" }, stdio: ["ignore", "pipe", "pipe"], detached: true });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      const exited = new Promise((resolve) => child.on("exit", resolve));
      for (let i = 0; i < 200 && !out.includes('"store":"SQLite ') && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
      process.kill(-child.pid!, "SIGTERM");
      await exited;
      expect(out).toContain(`"store":"SQLite ${join(folder, file)}"`);
      expect(readdirSync(join(folder, "rel"), { recursive: true })).toContain(file.slice("rel/".length));
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
