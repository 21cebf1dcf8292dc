// README.md's Quick start and curl walk-through, run as a newcomer runs them against `npm start`
// (the real entry point, on a free port with a fresh DATA_DIR): the Quick start's cardflow line,
// then the walk-through, and all of it again on the same store, so a second run works too. Each
// `#=>` line must be what the command before it prints (an `error ...` line on stderr, the rest on
// stdout). Then SIGTERM must stop the service cleanly, and the temporary store is removed.
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
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

/** The shell block after a `<!-- readme-example: NAME ... -->` marker. */
function example(readme: string, name: string): string {
  const block = new RegExp(`<!-- readme-example: ${name}[^>]*-->\\s*\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(readme)?.[1];
  expect(block, `README.md has the ${name} example`).toBeDefined();
  return block!;
}

describe("README.md Quick start and HTTP walk-through", () => {
  it("run twice in a row against npm start, print what they say; SIGTERM stops the service", async () => {
    const readme = await readFile("README.md", "utf8");
    // npm install and npm start are what this test does itself; npm test is what runs it
    const quickStart = example(readme, "quick-start")
      .split("\n")
      .filter((line) => line.startsWith("npx cardflow"))
      .join("\n");
    expect(quickStart).toMatch(/^npx cardflow accounts create acct_demo/);
    const walkThrough = example(readme, "http");
    const expected = [...walkThrough.matchAll(/^#=> (.*)$/gm)].map((m) => m[1]!);
    const expectedOut = expected.filter((line) => !line.startsWith("error "));
    const expectedErr = expected.filter((line) => line.startsWith("error "));
    expect(expectedOut.length).toBeGreaterThan(3);
    expect(expectedErr.length).toBeGreaterThan(0);

    const port = await freePort();
    const dataDir = await mkdtemp(join(tmpdir(), "cardflow-readme-"));
    const env = { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "info", METRICS_PORT: "0", SHUTDOWN_GRACE_MS: "0" };
    // its own process group: npm, tsx and the service get the signal, as from a supervisor
    const server = spawn("npm", ["start", "--silent"], { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    server.stdout.on("data", (d) => (output += d));
    server.stderr.on("data", (d) => (output += d));
    // every process of the group holding the pipes has exited, and all their output is read
    const closed = new Promise<void>((resolve) => server.on("close", () => resolve()));
    try {
      for (let i = 0; ; i++) {
        const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
        if (up) break;
        if (i > 300) throw new Error(`npm start did not come up:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      // the banner is written once listening; its pipe may be read after the health check's answer
      for (let i = 0; !output.includes("cardflow accounts create") && i < 100; i++) await new Promise((r) => setTimeout(r, 100));
      expect(output).toContain("cardflow accounts create");

      const shell = (script: string) => run("bash", ["-euo", "pipefail", "-c", script], { env: { ...env, BASE: `http://127.0.0.1:${port}` } });
      for (const round of [1, 2]) {
        const quick = await shell(quickStart);
        expect(quick.stdout, `round ${round}: ${quick.stderr}`).toMatch(/^sk_\w+\n$/);
        expect(quick.stderr).toContain(`cardflow: store: SQLite ${join(dataDir, "cardflow.sqlite")}`);
        const { stdout, stderr } = await shell(walkThrough);
        expect(stdout.trim().split("\n"), `round ${round}: ${stderr}`).toEqual(expectedOut);
        for (const line of expectedErr) expect(stderr).toContain(line);
      }
    } finally {
      process.kill(-server.pid!, "SIGTERM");
    }
    try {
      const stopped = await Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 30_000))]);
      if (!stopped) process.kill(-server.pid!, "SIGKILL"); // leave nothing running
      expect(output).toContain('"msg":"stopped"');
      expect(await fetch(`http://127.0.0.1:${port}/healthz`).then(() => "up", () => "down")).toBe("down");
      // the request log never holds a key
      expect(output).not.toMatch(/sk_[0-9A-Za-z]{32}/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
    expect(existsSync(dataDir)).toBe(false);
  });
});
