// Versioned migrations (./migrations/NNN_*.sql), each run once, in order, recorded in
// <schema>.migrations, under an advisory lock: several processes starting together run them once.
import pg from "pg";
import { loadMigrations } from "../migrations.js";
import { StoreMissing } from "../port/missing.js";
import { inTransaction } from "./pool.js";

/**
 * Migrates the schema; returns whether it was created. With `mustExist` (a command that only
 * reads), a schema without cardflow's tables is refused (StoreMissing) and nothing is created.
 */
export async function migrate(pool: pg.Pool, schema: string, { mustExist = false } = {}): Promise<{ created: boolean }> {
  const steps = loadMigrations(new URL("./migrations/", import.meta.url));
  // unbounded: a step may take long (an index on a big table), and so may another process's, waited for
  return inTransaction(
    pool,
    async (client) => {
      // Serialises processes that start together: each step runs once, whoever comes first.
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`cardflow.migrate.${schema}`]);
      const { rows: found } = await client.query<{ schema: boolean; store: boolean }>(
        "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS schema, to_regclass(format('%I.migrations', $1::text)) IS NOT NULL AS store",
        [schema],
      );
      if (mustExist && !found[0]!.store) throw new StoreMissing(`no store in schema ${schema}`);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(`CREATE TABLE IF NOT EXISTS migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      const { rows } = await client.query<{ v: number | null }>("SELECT max(version) AS v FROM migrations");
      for (const step of steps.slice(rows[0]?.v ?? 0)) {
        // {{schema}}: the schema's name where a statement needs it as text (advisory lock keys)
        await client.query(step.sql.replaceAll("{{schema}}", schema));
        await client.query("INSERT INTO migrations (version) VALUES ($1)", [step.version]);
      }
      return { created: !found[0]!.schema };
    },
    { unbounded: true },
  );
}

/** Drops a schema this process created (its whole store), on a connection of its own: the store's pool may be closed. */
export async function dropSchema(connectionString: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
