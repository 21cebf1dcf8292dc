// README.md's curl walk-through is run as written against `npm start` (the real entry point, on
// a free port with a fresh DATA_DIR, the key created by `npx cardflow accounts create`), so it
// cannot rot: each `#=>` line must be what the command before it prints. Then SIGTERM must stop
// the service cleanly.
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

describe("README.md HTTP walk-through", () => {
  it("runs against npm start and prints what it says; SIGTERM stops the service", async () => {
    const readme = await readFile("README.md", "utf8");
    const block = /<!-- readme-example: http[^>]*-->\s*```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block, "README.md has the HTTP walk-through").toBeDefined();
    const expected = [...block!.matchAll(/^#=> (.*)$/gm)].map((m) => m[1]);
    expect(expected.length).toBeGreaterThan(3);

    const port = await freePort();
    const dataDir = await mkdtemp(join(tmpdir(), "cardflow-readme-"));
    const env = { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "info" };
    // its own process group: npm, tsx and the service get the signal, as from a supervisor
    const server = spawn("npm", ["start", "--silent"], { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    server.stdout.on("data", (d) => (output += d));
    server.stderr.on("data", (d) => (output += d));
    try {
      for (let i = 0; ; i++) {
        const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
        if (up) break;
        if (i > 300) throw new Error(`npm start did not come up:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(output).toContain("cardflow accounts create");

      const { stdout, stderr } = await run("bash", ["-euo", "pipefail", "-c", block!], { env: { ...env, BASE: `http://127.0.0.1:${port}` } });
      expect(stdout.trim().split("\n"), stderr).toEqual(expected);
    } finally {
      process.kill(-server.pid!, "SIGTERM");
    }
    for (let i = 0; i < 100 && !output.includes('"msg":"stopped"'); i++) await new Promise((r) => setTimeout(r, 100));
    if (!output.includes('"msg":"stopped"')) process.kill(-server.pid!, "SIGKILL"); // leave nothing running
    expect(output).toContain('"msg":"stopped"');
    expect(await fetch(`http://127.0.0.1:${port}/healthz`).then(() => "up", () => "down")).toBe("down");
    // the request log never holds a key
    expect(output).not.toMatch(/sk_[0-9A-Za-z]{32}/);
  });
});
