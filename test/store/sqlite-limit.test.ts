// The SQLite store's reads bound their rows with src/store/sqlite/limit.ts's LIMIT, never a bare
// `LIMIT ?`: SQLite plans with a bare parameter's value, so each binding expires the statement and
// every run compiles it again (measured with a perf probe on sqlite3Reprepare: once per list and per
// status read before, none after; better-sqlite3 does not expose the count, so the source is checked).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { event } from "./contract.js";

const DIR = join(import.meta.dirname, "../../src/store/sqlite");

describe("SQLite reads' LIMIT", () => {
  it("no statement of the SQLite store ends its rows with a bare LIMIT ?", () => {
    const bare = readdirSync(DIR)
      .filter((f) => f.endsWith(".ts"))
      .flatMap((f) => readFileSync(join(DIR, f), "utf8").split("\n").map((line, i) => [`${f}:${i + 1}`, line] as const))
      .filter(([, line]) => !line.trimStart().startsWith("//") && /LIMIT \?(?!\w)/i.test(line));
    expect(bare).toEqual([]);
  });

  it("still bounds what a read returns, from one row to the largest count", async () => {
    const { events, readModels } = createSqliteStore({ path: ":memory:" });
    try {
      const stream = "payment-pi_limit";
      await events.append(stream, Array.from({ length: 5 }, (_, i) => event("test.happened", { i })), { expectedRevision: "no_stream" });
      expect((await events.readAll({ maxCount: 2 })).length).toBe(2);
      expect((await events.readAll({ maxCount: Number.MAX_SAFE_INTEGER })).length).toBe(5);
      expect((await events.readStream(stream, { direction: "backwards", maxCount: 1 })).map((e) => e.revision)).toEqual([4]);
    } finally {
      await Promise.all([events.close(), readModels.close()]);
    }
  });
});
