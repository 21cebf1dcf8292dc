// The connection pool and what every statement goes through: connection faults and statements
// unanswered past the bound become StoreUnavailable (503, retry), transactions on a pooled client
// discard it after a fault.
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

/** A statement past its bound: cancelled by the server (statement_timeout, a lock wait too), or its answer not come (query_timeout). */
function isTimeout(e: unknown): boolean {
  const { code = "", message = "" } = (e ?? {}) as { code?: string; message?: string };
  return code === "57014" || message === "Query read timeout";
}

/** A lost or refused connection, or a statement past its bound, becomes StoreUnavailable (503, retry); anything else stays as it is. */
export const translated = (e: unknown) =>
  isConnectionError(e) ? new StoreUnavailable("PostgreSQL cannot be reached", { cause: e }) : isTimeout(e) ? new StoreUnavailable("PostgreSQL did not answer in time", { cause: e }) : e;

/**
 * The bound of one statement (ms): the server cancels it past this (statement_timeout: a lock
 * waited for too), and the client gives up ANSWER_MARGIN_MS later on a server that does not
 * answer at all (frozen, or the network gone: query_timeout). Either way the caller gets
 * StoreUnavailable (503) and the connection is discarded, as one lost: a COMMIT (an append's
 * statement) whose answer never came has an unknown outcome, as at a connection lost then. 4 s +
 * 1 s: the 5 s a request already waits for a connection, above the lists' 3 s wait for the read
 * models (a list they keep waiting answers read_model_behind first).
 */
export const STATEMENT_TIMEOUT_MS = 4_000;
const ANSWER_MARGIN_MS = 1_000;
/**
 * How long a connection may sit idle inside a transaction before the server ends its session:
 * a process frozen or cut off mid-transaction (SIGSTOP, a partition) otherwise keeps its row
 * locks, and every other process's write to those streams waits on them. Ours send a
 * transaction's statements back to back; 10 s is far above any pause between them.
 */
export const IDLE_IN_TRANSACTION_MS = 10_000;
/** The longest timer: what "no bound" is for query_timeout (0 would take the connection's). */
const NO_BOUND_MS = 2 ** 31 - 1;

/**
 * The default pool. Appends take at most two connections (group commit, ./append.ts), the rest
 * serve reads. Measured on 2 cores, 4 did as well as 10 (rows 10, 13b, 14b), no better: an early
 * run of row 14b that seemed to favour 4 was the bench client's own collections (docs/BENCHMARKS.md).
 */
export const DEFAULT_POOL_SIZE = 10;

/** How the pool's connections name themselves (pg_stat_activity.application_name): whose, and which schema's. */
export const applicationName = (schema: string) => `cardflow (${schema})`;

/** `statementTimeoutMillis`: each statement's bound (STATEMENT_TIMEOUT_MS); 0: none (commands over a whole store). */
export function createPool({ connectionString, schema, poolSize, connectionTimeoutMillis, statementTimeoutMillis }: { connectionString: string; schema: string; poolSize: number; connectionTimeoutMillis: number; statementTimeoutMillis: number }) {
  // connectionTimeoutMillis: while the database is away, a request waits this long for a
  // connection, then gets a 503 (StoreUnavailable), instead of waiting forever.
  const bound = statementTimeoutMillis > 0 && { statement_timeout: statementTimeoutMillis, query_timeout: statementTimeoutMillis + ANSWER_MARGIN_MS, idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS };
  const pool = new pg.Pool({ connectionString, max: poolSize, application_name: applicationName(schema), options: `-c search_path=${schema}`, connectionTimeoutMillis, ...bound });
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

/**
 * Statements outside a transaction, connection errors translated; `name`d ones are prepared once
 * per connection. A failed statement's client is discarded (pg.Pool.query: release(err)); past
 * query_timeout its statement is still running, so the socket is destroyed (pg's end()).
 */
export function statements(pool: pg.Pool) {
  const run = <R extends pg.QueryResultRow>(text: string, values: unknown[] = [], name?: string) =>
    pool.query<R>({ text, values, name }).catch((e: unknown) => {
      throw translated(e);
    });
  const query = <R extends pg.QueryResultRow>(sql: string, params: unknown[] = [], name?: string) => run<R>(sql, params, name).then((r) => r.rows);
  return { run, query };
}

export type Statements = ReturnType<typeof statements>;

/** The client with no bound on its statements' answers: for an unbounded transaction (inTransaction). */
function unboundedClient(client: pg.PoolClient): pg.PoolClient {
  const query = (q: string | pg.QueryConfig, values?: unknown[]) => client.query({ ...(typeof q === "string" ? { text: q, values } : q), query_timeout: NO_BOUND_MS } as pg.QueryConfig);
  return new Proxy(client, { get: (target, key) => (key === "query" ? query : Reflect.get(target, key)) });
}

export interface TransactionOptions {
  /** May add settings of the transaction to its BEGIN ("BEGIN; SET LOCAL ..."), in the same round trip. */
  begin?: string;
  /**
   * No bound on its statements (migrations, a read model's table made or emptied: DDL, bulk
   * deletes, and the advisory locks that wait for another process doing so). Getting a
   * connection stays bounded.
   */
  unbounded?: boolean;
}

/**
 * A transaction on a pooled client. A checked-out client has no 'error' listener of the pool's:
 * ours records that the connection dropped (pg_terminate_backend, a restart), so the client is
 * discarded, not reused (every client also has a permanent one: createPool). After a fault that
 * is StoreUnavailable (the connection lost, a statement past its bound: its answer may still be
 * on the way) no ROLLBACK is sent: the client is discarded, which ends the session, so the server
 * rolls back whatever did not commit. A COMMIT without an answer is then a commit of unknown
 * outcome, as at a connection lost during it.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (c: pg.PoolClient) => Promise<T>, { begin = "BEGIN", unbounded = false }: TransactionOptions = {}): Promise<T> {
  const pooled = await pool.connect().catch((e: unknown) => {
    throw translated(e);
  });
  const client = unbounded ? unboundedClient(pooled) : pooled;
  let broken: unknown;
  const onError = (e: unknown) => void (broken = e);
  pooled.on("error", onError);
  try {
    // `begin` without parameters: may hold several statements, one round trip
    await client.query(unbounded ? `${begin}; SET LOCAL statement_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0` : begin);
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (e) {
    const error = translated(e);
    if (error instanceof StoreUnavailable) broken ??= e;
    else await client.query("ROLLBACK").catch((rollback: unknown) => void (broken ??= rollback));
    throw error;
  } finally {
    pooled.off("error", onError);
    pooled.release(broken instanceof Error ? broken : broken !== undefined);
  }
}
