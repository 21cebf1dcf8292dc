// `npx cardflow events tail &` then `kill $!`: npm exec does not pass the signal on; the follower,
// orphaned, would follow the store forever. Started by npm exec, it stops once npm is gone (as
// serve does, src/serve/parent.ts).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createEngine } from "../../src/engine.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-tail-parent-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it("npx cardflow events tail: killing npx stops the follower too", { timeout: 120_000 }, async () => {
  const { events, readModels } = createSqliteStore({ path: join(dir, "cardflow.sqlite") });
  const engine = createEngine({ store: events, readModels });
  await engine.openAccount({ external_account_id: "acct_tail" });
  await engine.close();
  const starter = spawn("npx", ["cardflow", "events", "tail"], { env: { ...process.env, DATA_DIR: dir, DATABASE_URL: "", CARDFLOW_STORE: "" }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  starter.stdout.on("data", (d) => (output += d));
  starter.stderr.on("data", (d) => (output += d));
  const alive = () => {
    try {
      process.kill(-starter.pid!, 0);
      return true;
    } catch {
      return false;
    }
  };
  try {
    for (let i = 0; !output.includes("store: SQLite"); i++) {
      if (i > 600) throw new Error(`tail did not start:\n${output}`);
      await sleep(100);
    }
    await sleep(500); // following now
    starter.kill("SIGTERM");
    let gone = false;
    for (let i = 0; i < 100 && !gone; i++) gone = (await sleep(100), !alive());
    expect(gone, output).toBe(true);
  } finally {
    if (alive()) process.kill(-starter.pid!, "SIGKILL");
  }
});
