// The connection pool and what every statement goes through: connection faults become
// StoreUnavailable (503, retry), transactions on a pooled client discard it after a fault.
import pg from "pg";
import { StoreUnavailable } from "../port/unavailable.js";

/** Errors that say the database cannot be reached right now (not that the request is wrong). */
function isConnectionError(e: unknown): boolean {
  const { code = "", message = "" } = (e ?? {}) as { code?: string; message?: string };
  return (
    code.startsWith("08") || // connection exception
    ["57P01", "57P02", "57P03", "53300"].includes(code) || // shut down, crashed, starting, too many connections
    /^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NETUNREACH|NOTFOUND|AI_AGAIN)$/.test(code) ||
    /connection terminated|connection timeout|timeout exceeded when trying to connect|connection error|not queryable/i.test(message)
  );
}

/** A lost or refused connection becomes StoreUnavailable (503, retry); anything else stays as it is. */
export const translated = (e: unknown) => (isConnectionError(e) ? new StoreUnavailable("PostgreSQL cannot be reached", { cause: e }) : e);

/**
 * The default pool. Appends take at most two connections (group commit, ./append.ts), the rest
 * serve reads. Measured on 2 cores, 4 did as well as 10 (rows 10, 13b, 14b), no better: an early
 * run of row 14b that seemed to favour 4 was the bench client's own collections (docs/BENCHMARKS.md).
 */
export const DEFAULT_POOL_SIZE = 10;

/** How the pool's connections name themselves (pg_stat_activity.application_name): whose, and which schema's. */
export const applicationName = (schema: string) => `cardflow (${schema})`;

export function createPool({ connectionString, schema, poolSize, connectionTimeoutMillis }: { connectionString: string; schema: string; poolSize: number; connectionTimeoutMillis: number }) {
  // connectionTimeoutMillis: while the database is away, a request waits this long for a
  // connection, then gets a 503 (StoreUnavailable), instead of waiting forever.
  const pool = new pg.Pool({ connectionString, max: poolSize, application_name: applicationName(schema), options: `-c search_path=${schema}`, connectionTimeoutMillis });
  pool.on("error", () => undefined); // an idle client lost its connection; the pool replaces it
  // Every client also keeps a listener of its own for life: the pool removes its idle listener
  // when it hands a client over, and our listener (inTransaction) comes a microtask later, after
  // the rest of the socket chunk is parsed. A chunk ending a query with the server's "terminating
  // connection" (pg_terminate_backend, a restart) emitted that error on a client without any
  // listener, which ended the process. The client is then unusable; its next query fails, as a
  // connection error (StoreUnavailable), and it is discarded.
  pool.on("connect", (client) => client.on("error", () => undefined));
  return pool;
}

/** Statements outside a transaction, connection errors translated; `name`d ones are prepared once per connection. */
export function statements(pool: pg.Pool) {
  const run = <R extends pg.QueryResultRow>(text: string, values: unknown[] = [], name?: string) =>
    pool.query<R>({ text, values, name }).catch((e: unknown) => {
      throw translated(e);
    });
  const query = <R extends pg.QueryResultRow>(sql: string, params: unknown[] = [], name?: string) => run<R>(sql, params, name).then((r) => r.rows);
  return { run, query };
}

export type Statements = ReturnType<typeof statements>;

/**
 * A transaction on a pooled client. A checked-out client has no 'error' listener of the pool's:
 * ours records that the connection dropped (pg_terminate_backend, a restart), so the client is
 * discarded, not reused (every client also has a permanent one: createPool). `begin` may add
 * settings of the transaction to its BEGIN ("BEGIN; SET LOCAL ..."), in the same round trip.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (c: pg.PoolClient) => Promise<T>, begin = "BEGIN"): Promise<T> {
  const client = await pool.connect().catch((e: unknown) => {
    throw translated(e);
  });
  let broken: unknown;
  const onError = (e: unknown) => void (broken = e);
  client.on("error", onError);
  try {
    await client.query(begin); // `begin` without parameters: may hold several statements, one round trip
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (e) {
    await client.query("ROLLBACK").catch((rollback: unknown) => void (broken ??= rollback));
    throw translated(e);
  } finally {
    client.off("error", onError);
    client.release(broken instanceof Error ? broken : broken !== undefined);
  }
}
