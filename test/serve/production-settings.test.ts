// Production, as an operator starts it, with settings that are the sandbox's: the in-memory store
// is refused (real payments, the reconciler's open calls and the Idempotency-Key records would end
// with the process, and a retry could charge again); the simulators' settings and the seeded
// defect, which production does not read, are named in one warning of the start log (an env file
// shared with a sandbox is no reason to refuse). The processors are a module of stubs, so nothing
// else stops the start.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { SANDBOX_ONLY_SETTINGS } from "../../src/serve/sandbox-only.js";
import { SERVER_NODE_ARGS } from "../support/server-args.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "bin/cardflow.js");
const dir = mkdtempSync(join(tmpdir(), "cardflow-production-settings-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PRODUCTION = { NODE_ENV: "production", SANDBOX: "", PROCESSORS_MODULE: "test/fixtures/processors/stubs.mjs", WEBHOOK_SIGNING_KEY: "ab".repeat(32) };

/** A start: its exit code, or "listening" once it serves (then stopped), and what it wrote. */
async function start(args: string[], env: Record<string, string>): Promise<{ code: number | null | "listening"; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: "", CARDFLOW_STORE: "", PORT: "0", HOST: "127.0.0.1", METRICS_PORT: "0", SHUTDOWN_GRACE_MS: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let [stdout, stderr] = ["", ""];
  child.stdout.on("data", (d) => (stdout += d));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const listening = new Promise<"listening">((resolve) =>
    child.stderr.on("data", (d) => {
      stderr += d;
      if (stderr.includes("cardflow is listening on")) resolve("listening");
    }),
  );
  const code = await Promise.race([exited, listening]);
  if (code === "listening") {
    child.kill("SIGTERM");
    await exited;
  }
  return { code, stdout, stderr };
}

describe("production refuses the in-memory store", () => {
  it.each([
    ["cardflow serve --store memory", [BIN, "serve", "--store", "memory"], {}, "--store memory"],
    ["cardflow serve with CARDFLOW_STORE=memory", [BIN, "serve"], { CARDFLOW_STORE: "memory" }, "CARDFLOW_STORE=memory"],
    ["npm start with CARDFLOW_STORE=memory", [...SERVER_NODE_ARGS, "src/main.ts"], { CARDFLOW_STORE: "memory" }, "CARDFLOW_STORE=memory"],
    ["SANDBOX=off, cardflow serve --store memory", [BIN, "serve", "--store", "memory"], { NODE_ENV: "", SANDBOX: "off" }, "--store memory"],
  ])("%s: exit 1, one line naming it and why, no key printed, nothing made", { timeout: 60_000 }, async (_, args, env, named) => {
    const dataDir = mkdtempSync(join(dir, "data-"));
    const { code, stderr } = await start(args, { ...PRODUCTION, DATA_DIR: dataDir, ...env });
    expect(code, stderr).toBe(1);
    expect(stderr).toBe(
      `cardflow: refusing to start: ${named}: production needs a durable store: payments, processor calls left for the reconciler and Idempotency-Key records would live in this process's memory only, lost at a restart (a retry could charge again); use SQLite (DATA_DIR, or --store sqlite:PATH) or PostgreSQL (DATABASE_URL, or --store postgres:URL)\n`,
    );
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it("the same production start on a SQLite store serves (the stubs module is no refusal of its own)", { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(join(dir, "data-"));
    const { code, stderr } = await start([BIN, "serve", "--store", `sqlite:${join(dataDir, "cardflow.sqlite")}`], { ...PRODUCTION, DATA_DIR: dataDir });
    expect(code, stderr).toBe("listening");
    expect(stderr).toContain("mode: production (adapters: test/fixtures/processors/stubs.mjs)");
  });
});

describe("sandbox-only settings given in production", () => {
  const SIM = { SIM_CAPTURES: "requested", SIM_CAPTURE_SETTLE_MS: " ", SIM_PROCESSOR_LATENCY_MS: "5", CARDFLOW_SEEDED_DEFECT: "skip-expected-revision" };
  const named = "SIM_CAPTURES, SIM_PROCESSOR_LATENCY_MS, CARDFLOW_SEEDED_DEFECT";
  /** The start log's warnings about them. */
  const warnings = (stdout: string) =>
    stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string; settings?: string[] })
      .filter((entry) => entry.settings !== undefined);

  it.each([
    ["npm start", [...SERVER_NODE_ARGS, "src/main.ts"]],
    ["cardflow serve --workers 2 (said by the primary, not by each worker)", [BIN, "serve", "--workers", "2"]],
  ])("%s: started, with one warning naming each one set (a blank one is unset) and that it has no effect outside the sandbox", { timeout: 90_000 }, async (_, args) => {
    const { code, stdout, stderr } = await start(args, { ...PRODUCTION, ...SIM, DATA_DIR: mkdtempSync(join(dir, "data-")) });
    expect(code, stderr).toBe("listening");
    expect(warnings(stdout)).toEqual([
      expect.objectContaining({ level: 40, settings: named.split(", "), msg: `${named}: set, but sandbox-only settings: no effect outside the sandbox (this process runs production)` }),
    ]);
  });

  it("one alone is said as one; the sandbox, which reads them, says nothing of them", { timeout: 60_000 }, async () => {
    const one = await start([BIN, "serve"], { ...PRODUCTION, SIM_CAPTURES: "requested", DATA_DIR: mkdtempSync(join(dir, "data-")) });
    expect(warnings(one.stdout).map((w) => w.msg)).toEqual(["SIM_CAPTURES: set, but a sandbox-only setting: no effect outside the sandbox (this process runs production)"]);
    const sandbox = await start([BIN, "serve"], { NODE_ENV: "", SANDBOX: "", PROCESSORS_MODULE: "", SIM_CAPTURES: "requested", SIM_PROCESSOR_LATENCY_MS: "5", DATA_DIR: mkdtempSync(join(dir, "data-")) });
    expect(sandbox.code, sandbox.stderr).toBe("listening");
    expect(warnings(sandbox.stdout)).toEqual([]);
  });

  it("the list holds every SIM_ variable the sources read", () => {
    const sources = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts"));
    const read = new Set(sources.flatMap((file) => readFileSync(join(ROOT, "src", file), "utf8").match(/\bSIM_[A-Z_]+\b/g) ?? []));
    expect(read.size).toBeGreaterThan(0);
    for (const name of read) expect(SANDBOX_ONLY_SETTINGS, name).toContain(name);
  });
});
