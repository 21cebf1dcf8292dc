// A full disk (SQLITE_FULL; here a page limit on the connection, as a full file system answers) is
// the store not answering: StoreUnavailable, which HTTP answers 503 with Retry-After, and nothing of
// the batch is appended. It was thrown as it came (500 internal_error).
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sqliteAppender } from "../../src/store/sqlite/append.js";
import { createSqliteStore } from "../../src/store/sqlite/index.js";
import { StoreUnavailable } from "../../src/store/port/unavailable.js";
import { event } from "./contract.js";

const dir = mkdtempSync(join(tmpdir(), "cardflow-full-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("SQLite: a full disk", () => {
  it("an append that does not fit is StoreUnavailable, and nothing of it is stored", async () => {
    const path = join(dir, "events.sqlite");
    const made = createSqliteStore({ path });
    await made.events.append("payment-pi_1", [event("test.happened", { n: 1 })], { expectedRevision: "no_stream" });
    await Promise.all([made.events.close(), made.readModels.close()]);

    const db = new Database(path);
    db.pragma(`max_page_count = ${db.pragma("page_count", { simple: true }) as number}`); // the file cannot grow: full
    const appender = sqliteAppender(db, { busyTimeoutMs: 100, replaceClaim: () => true, onCommit: () => undefined });
    const big = Array.from({ length: 50 }, (_, n) => event("test.happened", { n, filler: "x".repeat(4_000) }));
    const failed = await appender.append("payment-pi_2", big, { expectedRevision: "no_stream" }).then(() => undefined, (e: unknown) => e);
    expect(failed).toBeInstanceOf(StoreUnavailable);
    expect((failed as Error).message).toContain("(the SQLite store cannot be written: database or disk is full)");
    expect(db.prepare("SELECT count(*) AS n FROM events").get()).toEqual({ n: 1 });
    db.close();
  });
});
