// Versioned migrations (./migrations/NNN_*.sql), each run once, in order, recorded in
// <schema>.migrations, under an advisory lock: several processes starting together run them once.
import type pg from "pg";
import { loadMigrations } from "../migrations.js";
import { inTransaction } from "./pool.js";

export async function migrate(pool: pg.Pool, schema: string): Promise<void> {
  const steps = loadMigrations(new URL("./migrations/", import.meta.url));
  await inTransaction(pool, async (client) => {
    // Serialises processes that start together: each step runs once, whoever comes first.
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`cardflow.migrate.${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ v: number | null }>("SELECT max(version) AS v FROM migrations");
    for (const step of steps.slice(rows[0]?.v ?? 0)) {
      // {{schema}}: the schema's name where a statement needs it as text (advisory lock keys)
      await client.query(step.sql.replaceAll("{{schema}}", schema));
      await client.query("INSERT INTO migrations (version) VALUES ($1)", [step.version]);
    }
  });
}
