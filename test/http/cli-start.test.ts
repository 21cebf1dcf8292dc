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
