// A server's connection left idle inside a transaction (its process frozen or cut off between two
// statements) does not keep its locks for ever: PostgreSQL ends that session after
// IDLE_IN_TRANSACTION_MS, and another process's write gets the lock. The commands over a whole
// store (unbounded) are not cut.
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createPool, IDLE_IN_TRANSACTION_MS, inTransaction } from "../../src/store/postgres/pool.js";
import { testDatabase } from "../support/postgres.js";

const database = await testDatabase();
const pool = createPool({ connectionString: database, schema: "public", poolSize: 2, connectionTimeoutMillis: 5_000, statementTimeoutMillis: 4_000 });
afterAll(() => pool.end());

/** Whether another session can take the advisory lock now (it takes and gives it back at once). */
async function lockFree(key: number): Promise<boolean> {
  const other = new pg.Client({ connectionString: database });
  await other.connect();
  try {
    const { rows } = await other.query<{ got: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS got", [key]);
    return rows[0]!.got;
  } finally {
    await other.end();
  }
}

describe("a transaction left idle", () => {
  it("is ended by the server after the bound, its locks given up; an unbounded one is not bounded", { timeout: 60_000 }, async () => {
    const idle = await pool.connect();
    idle.on("error", () => undefined); // the server ends the session: expected here
    await idle.query("BEGIN");
    await idle.query("SELECT pg_advisory_xact_lock(7)");
    expect(await lockFree(7)).toBe(false);

    const started = Date.now();
    while (!(await lockFree(7))) {
      expect(Date.now() - started, "the idle transaction still holds its lock").toBeLessThan(IDLE_IN_TRANSACTION_MS + 10_000);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_IN_TRANSACTION_MS - 1_000);
    idle.release(true);

    const settings = await inTransaction(pool, async (c) => (await c.query<{ v: string }>("SELECT current_setting('idle_in_transaction_session_timeout') AS v")).rows[0]!.v, { unbounded: true });
    expect(settings).toBe("0");
  });
});
