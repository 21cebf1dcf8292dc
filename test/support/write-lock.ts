// Another process holding a new SQLite file's write lock (the file still in rollback mode, as a
// process that just created it holds it): SQLite runs no busy handler for the switch to WAL, so
// an opener must wait on its own (src/store/sqlite/open.ts, walMode).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";

const betterSqlite3 = createRequire(import.meta.url).resolve("better-sqlite3");

/** Creates `path` (no table in it yet, as a store's first open makes it) in a plain node process that holds its write lock for `ms`; resolves once held, with the process's exit. */
export async function holdWriteLock(path: string, ms: number): Promise<{ released: Promise<unknown> }> {
  const holder = `const Database = require(${JSON.stringify(betterSqlite3)});
    const db = new Database(${JSON.stringify(path)});
    db.exec("BEGIN IMMEDIATE");
    console.log("holding");
    setTimeout(() => { db.exec("COMMIT"); db.close(); }, ${ms});`;
  const child = spawn(process.execPath, ["-e", holder], { stdio: ["ignore", "pipe", "inherit"] });
  const released = new Promise((resolve) => child.on("exit", resolve));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => line === "holding" && resolve());
    child.on("exit", (code) => reject(new Error(`the lock holder exited (${code}) before holding`)));
  });
  return { released };
}
