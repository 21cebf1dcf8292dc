// `cardflow events export | head`: the reader goes away after what it wanted; the command ends
// quietly with its exit code, not with an EPIPE stack trace (a probe's `| head -c 600` saw one).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createEngine } from "../../src/engine.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";

const BIN = new URL("../../bin/cardflow.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "cardflow-cli-pipe-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("a reader that closes the pipe early ends the command quietly, exit 0", { timeout: 120_000 }, async () => {
  // an export larger than a pipe's buffer (64 KiB): the writer meets the closed pipe
  const { events, readModels } = createSqliteStore({ path: join(dir, "cardflow.sqlite") });
  const engine = createEngine({ store: events, readModels });
  for (let i = 0; i < 800; i++) await engine.openAccount({ external_account_id: `acct_pipe_${i}` });
  await engine.close();
  const child = spawn(process.execPath, [BIN, "events", "export"], { env: { ...process.env, DATA_DIR: dir, DATABASE_URL: "", CARDFLOW_STORE: "" }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
  child.stdout.destroy(); // `head -c 100` has what it wanted
  expect(await exited, stderr).toBe(0);
  expect(stderr).not.toMatch(/EPIPE|node:events|at /);
});
