// WAL checkpoints in a worker thread (src/store/sqlite/checkpoints.ts): the committing connection
// checkpoints only past its backstop, the worker checkpoints what was written, a bulk window
// checkpoints on its own connection, and closing leaves no WAL behind (the worker's connection
// closed first, so the file's own close is the last and removes it).
import Database from "better-sqlite3";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BACKSTOP_PAGES, checkpointOffTheLoop } from "../../src/store/sqlite/checkpoints.js";

let dir: string;
beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), "cardflow-checkpoints-"))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function walFile(path: string) {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE docs (key TEXT PRIMARY KEY, doc TEXT NOT NULL)");
  return db;
}
const autocheckpoint = (db: Database.Database) => db.pragma("wal_autocheckpoint", { simple: true });

describe("SQLite WAL checkpoints off the event loop", () => {
  it("the committing connection keeps only the backstop; the worker checkpoints every frame written, without its help", async () => {
    const path = join(dir, "a.sqlite");
    const db = walFile(path);
    const checkpoints = checkpointOffTheLoop(db, path, 100);
    expect(autocheckpoint(db)).toBe(BACKSTOP_PAGES);
    const put = db.prepare("INSERT INTO docs (key, doc) VALUES (?, ?)");
    // rows of 4 KB on 4 KB pages (about 4 pages written each): past the 100 pages at which the
    // read models' connection checkpointed before, below the backstop, so it never checkpoints itself
    for (let i = 0; i < 100; i++) put.run(`k${i}`, "x".repeat(4_000));
    const done = await checkpoints.settled();
    expect(done).not.toBeNull();
    expect(done!.log).toBeGreaterThan(100);
    expect(done!.log).toBeLessThan(BACKSTOP_PAGES);
    expect(done!.checkpointed).toBe(done!.log);
    await checkpoints.close();
    db.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it("looks by itself: writes are checkpointed within a few looks, with nothing asked", async () => {
    const path = join(dir, "b.sqlite");
    const db = walFile(path);
    const checkpoints = checkpointOffTheLoop(db, path, 100);
    const put = db.prepare("INSERT INTO docs (key, doc) VALUES (?, ?)");
    for (let i = 0; i < 50; i++) put.run(`k${i}`, "x".repeat(4_000));
    // Once every frame is checkpointed, the next write starts the WAL over, with new salts in its
    // header (bytes 16-23). 50 pages is far below the backstop: only the worker can have done it.
    const salts = () => readFileSync(`${path}-wal`).subarray(16, 24).toString("hex");
    const before = salts();
    let after = before;
    for (let waited = 0; waited < 5_000 && after === before; waited += 50) {
      await new Promise((r) => setTimeout(r, 50));
      put.run(`again${waited}`, "y");
      after = salts();
    }
    expect(after).not.toBe(before);
    await checkpoints.close();
    db.close();
  });

  it("a bulk window checkpoints on the committing connection (unsynced, as before), and hands back after", async () => {
    const path = join(dir, "c.sqlite");
    const db = walFile(path);
    const checkpoints = checkpointOffTheLoop(db, path, 100);
    checkpoints.onTheLoop();
    expect(autocheckpoint(db)).toBe(100);
    checkpoints.offTheLoop();
    expect(autocheckpoint(db)).toBe(BACKSTOP_PAGES);
    await checkpoints.close();
    db.close();
  });

  it("a store opened, written and closed by a CLI-like script: the script runs to its end and leaves no WAL file", () => {
    const path = join(dir, "cli.sqlite");
    const script = `
      import { createSqliteStore } from "./src/store/sqlite/index.ts";
      const { events, readModels } = createSqliteStore({ path: ${JSON.stringify(path)} });
      for (let i = 0; i < 20; i++) await events.append("s-" + i, [{ id: crypto.randomUUID(), type: "X", version: 1, data: { i }, metadata: {} }], { expectedRevision: "no_stream" });
      await new Promise((r) => setTimeout(r, 250)); // the worker has looked at least once
      await events.close();
      await readModels.close();
      console.log("closed");
    `;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: join(import.meta.dirname, "../.."), encoding: "utf8", timeout: 30_000 });
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toBe("closed");
    expect(run.status).toBe(0);
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(existsSync(path.replace(".sqlite", ".read-models.sqlite-wal"))).toBe(false);
  });
});
