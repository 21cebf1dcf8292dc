// PostgreSQL adapter (pg): events, idempotency records and read models in one schema, migrated by
// numbered SQL files (./migrations/). Appends are group-committed (./append.ts); the global order
// has no gaps that fill later (./read.ts); other processes' subscribers are woken by NOTIFY
// (./signal.ts), the poll being the safety net.
import type { EventStore } from "../port.js";
import type { ReadModelStore } from "../port/read-models.js";
import { createPump } from "../pump.js";
import { SCHEMA_NAME, SCHEMA_RULE, sharedConnection } from "../sql.js";
import { postgresAppender } from "./append.js";
import { postgresIdempotency } from "./idempotency.js";
import { postgresSequences } from "./ids.js";
import { dropSchema, migrate } from "./migrate.js";
import { createPool, DEFAULT_POOL_SIZE, STATEMENT_TIMEOUT_MS, statements } from "./pool.js";
import { postgresReads } from "./read.js";
import { postgresReadModels } from "./read-models.js";
import { createAppendSignal } from "./signal.js";

export interface PostgresStoreOptions {
  connectionString: string;
  /** Schema holding the tables; created when missing. Default "cardflow". */
  schema?: string;
  /** A schema without cardflow's tables is refused (StoreMissing), nothing created: for commands that only read. */
  mustExist?: boolean;
  /** Connections in this handle's pool. Default 10 (DEFAULT_POOL_SIZE, ./pool.ts). */
  poolSize?: number;
  /**
   * How often subscribers look for appends without being told (ms). Default 1,000: other
   * processes' appends wake them at once through LISTEN/NOTIFY (./signal.ts); the poll is
   * the safety net for a notification lost while the listening connection was down.
   */
  pollMs?: number;
  /** How long a statement waits for a connection while the database is away (ms). Default 5,000. */
  connectionTimeoutMillis?: number;
  /**
   * How long one statement may take (ms; the client waits 1 s more for an answer), then
   * StoreUnavailable: a frozen or locked database answers 503 within seconds. Default 4,000
   * (STATEMENT_TIMEOUT_MS, ./pool.ts); 0: no bound, for commands over a whole store (audit --all,
   * export, import). Migrations and a read model's table made or emptied are never bounded.
   */
  statementTimeoutMillis?: number;
}

/** One pool, two ports. Each of `events` and `readModels` must be closed; the pool ends when both are. */
export interface PostgresStore {
  events: EventStore;
  readModels: ReadModelStore;
  /** Only when this open created the schema: drops it, after both are closed (a command that failed leaves nothing behind). */
  discard?: () => Promise<void>;
}

export async function createPostgresStore({ connectionString, schema = "cardflow", mustExist = false, poolSize = DEFAULT_POOL_SIZE, pollMs = 1_000, connectionTimeoutMillis = 5_000, statementTimeoutMillis = STATEMENT_TIMEOUT_MS }: PostgresStoreOptions): Promise<PostgresStore> {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name ${JSON.stringify(schema)}: expected ${SCHEMA_RULE}`);
  const pool = createPool({ connectionString, schema, poolSize, connectionTimeoutMillis, statementTimeoutMillis });
  let created: boolean;
  try {
    ({ created } = await migrate(pool, schema, { mustExist }));
  } catch (e) {
    await pool.end();
    throw e;
  }
  const sql = statements(pool);
  const reads = postgresReads(sql);

  let closing = false;
  const pump = createPump((after, maxCount) => (closing ? Promise.resolve([]) : reads.readAllVisible(after, maxCount)), { pollMs });
  // Channel names are identifiers (at most 63 bytes): schemas sharing a long prefix only wake each other for nothing.
  const signal = createAppendSignal({ connectionString, channel: `cardflow_${schema}`.slice(0, 63), onAppended: (position) => pump.notify(position) });
  const appender = postgresAppender(sql, (position) => {
    pump.notify(position);
    signal.send(position);
  });
  const release = sharedConnection(() => pool.end());

  const events: EventStore = {
    append: appender.append,
    readStream: reads.readStream,
    readAll: reads.readAll,
    head: reads.head,
    subscribeToAll: (options, onEvent) => pump.subscribe(options, onEvent),
    ...postgresIdempotency(sql),
    ...postgresSequences(sql),
    close: release(async () => {
      appender.close();
      closing = true;
      await Promise.all([pump.closeAll(), signal.close()]);
    }),
  };
  return { events, readModels: postgresReadModels(pool, schema, sql, release()), ...(created && { discard: () => dropSchema(connectionString, schema) }) };
}
