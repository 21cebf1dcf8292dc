// `npm start` on a port another process holds: a clear message naming the port and how to choose
// another, in the one form every refusal to start takes, a non-zero exit, no stack trace.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SERVER_NODE_ARGS } from "../support/server-args.js";

describe("npm start", () => {
  it("says the port is in use and how to choose another, exits non-zero, no stack trace", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const { port } = holder.address() as { port: number };
    const dataDir = await mkdtemp(join(tmpdir(), "cardflow-start-"));
    try {
      const child = spawn(process.execPath, [...SERVER_NODE_ARGS, "src/main.ts"], {
        env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, METRICS_PORT: "0" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      expect(code).not.toBe(0);
      expect(stderr).toBe(`cardflow: refusing to start: port ${port} on 127.0.0.1 is already in use (another cardflow, or another service?); choose another with PORT, e.g. PORT=${port + 1} npm start\n`);
    } finally {
      holder.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
