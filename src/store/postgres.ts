// PostgreSQL adapter (pg): events, idempotency records and read models in one schema.
//
// Stream revisions are enforced by UNIQUE (stream, revision): two appenders that read the same
// last revision both try to insert the next one and the database refuses the second.
//
// Global positions without gaps that fill later: a bigserial alone is allocated at insert time
// but becomes visible at commit time, so a reader could see position 7 before 6 commits and skip
// 6 for good. Each row therefore carries its transaction id (xid8), and readers only return rows
// whose transaction is older than the oldest one still running, pg_snapshot_xmin(...): such rows
// can no longer change. That alone is not enough when an older transaction holds a higher
// position than a younger one, so reserve_positions() takes the transaction id and the positions
// together under a short advisory lock: a transaction's positions are above those of every
// transaction with a smaller id. Hence once rows are visible, no row with a lower position can
// appear later. The lock covers one statement, not the commit, so commits stay concurrent and
// PostgreSQL flushes concurrent commits together (its own group commit).
// Cost: a transaction that stays open anywhere in the cluster holds subscribers back until it ends.
//
// A transaction reserves positions once: a second reservation could come after a younger
// transaction's and sit above its positions.
//
// Appends are group-committed (append_batch_set): those arriving while a batch is in flight go
// together in the next one, one statement and one commit for many streams; each keeps its own
// expected-revision check and idempotency record, checked set-based for the whole batch (a batch
// the statement refuses as a whole goes again through append_batch_json, a savepoint per append).
// Hot statements are named (prepared once per connection). Other processes' subscribers are woken
// by NOTIFY (./postgres-signal.ts).
import pg from "pg";
import {
  checkCheckpoint,
  IdempotencyClaimLost,
  StoreUnavailable,
  WrongExpectedRevision,
  type AppendOptions,
  type AppendResult,
  type EventData,
  type EventStore,
  type IdempotencyRecord,
  type ListPage,
  type ReadModelStore,
} from "./port.js";
import { createAppendSignal } from "./postgres-signal.js";
import { createPump } from "./pump.js";
import { RELEASED_SQL, sharedConnection, streamRange, toRecorded, type EventRow } from "./sql.js";

export interface PostgresStoreOptions {
  connectionString: string;
  /** Schema holding the tables; created when missing. Default "cardflow". */
  schema?: string;
  /** Connections in this handle's pool. Default 10. */
  poolSize?: number;
  /**
   * How often subscribers look for appends without being told (ms). Default 1,000: other
   * processes' appends wake them at once through LISTEN/NOTIFY (./postgres-signal.ts); the poll is
   * the safety net for a notification lost while the listening connection was down.
   */
  pollMs?: number;
  /** How long a statement waits for a connection while the database is away (ms). Default 5,000. */
  connectionTimeoutMillis?: number;
}

/** One pool, two ports. Each of `events` and `readModels` must be closed; the pool ends when both are. */
export interface PostgresStore {
  events: EventStore;
  readModels: ReadModelStore;
}

// Versioned migrations: each runs once, in order, recorded in <schema>.migrations.
const migrations = (schema: string): string[] => [
  `CREATE TABLE events (
     position bigserial PRIMARY KEY,
     tx       xid8 NOT NULL DEFAULT pg_current_xact_id(),
     stream   text NOT NULL,
     revision bigint NOT NULL,
     id       text NOT NULL UNIQUE,
     type     text NOT NULL,
     version  integer NOT NULL,
     data     json NOT NULL,     -- json, not jsonb: the text is kept byte for byte (key order included)
     metadata json NOT NULL,
     CONSTRAINT events_stream_revision UNIQUE (stream, revision)
   );
   CREATE FUNCTION reserve_positions(n integer) RETURNS bigint LANGUAGE plpgsql AS $$
   DECLARE first bigint;
   BEGIN
     PERFORM pg_advisory_lock(hashtext('cardflow.positions.${schema}'));
     PERFORM pg_current_xact_id();                      -- take the transaction id under the lock
     first := nextval('events_position_seq');
     IF n > 1 THEN PERFORM setval('events_position_seq', first + n - 1); END IF;
     PERFORM pg_advisory_unlock(hashtext('cardflow.positions.${schema}'));
     RETURN first;
   END $$ SET search_path FROM CURRENT;
   -- One append in one statement (one round trip): the retry check, the expected-revision check
   -- (SQLSTATE CF001, DETAIL = actual revision), positions, rows and the idempotency record.
   CREATE FUNCTION append_events(p_stream text, p_expected text, p_ids text[], p_types text[], p_versions integer[],
                                 p_data json[], p_metadata json[], p_idempotency json)
   RETURNS TABLE (next_revision bigint, last_position bigint) LANGUAGE plpgsql AS $$
   DECLARE
     n integer := coalesce(array_length(p_ids, 1), 0);
     prior record;
     current bigint;
     first bigint;
   BEGIN
     IF n > 0 THEN
       SELECT e.stream, e.revision, e.position INTO prior FROM events e WHERE e.id = p_ids[1];
       IF FOUND AND prior.stream = p_stream THEN
         RETURN QUERY SELECT e.revision, e.position FROM events e WHERE e.id = ANY (ARRAY[p_ids[1], p_ids[n]]) ORDER BY e.position DESC LIMIT 1;
         RETURN;
       END IF;
     END IF;
     SELECT coalesce(max(e.revision), -1) INTO current FROM events e WHERE e.stream = p_stream;
     IF NOT (p_expected = 'any' OR (p_expected = 'no_stream' AND current = -1) OR (p_expected = 'stream_exists' AND current >= 0)
             OR (p_expected ~ '^-?[0-9]+$' AND p_expected::bigint = current)) THEN
       RAISE EXCEPTION 'wrong expected revision' USING ERRCODE = 'CF001', DETAIL = current::text;
     END IF;
     IF n = 0 THEN
       RETURN QUERY SELECT current, coalesce(max(e.position), 0) FROM events e;
       RETURN;
     END IF;
     first := reserve_positions(n);
     INSERT INTO events (position, stream, revision, id, type, version, data, metadata)
       SELECT first + i - 1, p_stream, current + i, p_ids[i], p_types[i], p_versions[i], p_data[i], p_metadata[i]
       FROM generate_series(1, n) AS i;
     IF p_idempotency IS NOT NULL THEN
       INSERT INTO idempotency (key, fingerprint, status, body, expires_at)
       VALUES (p_idempotency->>'key', p_idempotency->>'fingerprint', (p_idempotency->>'status')::integer,
               p_idempotency->'body', p_idempotency->>'expires_at')
       ON CONFLICT (key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status,
         body = excluded.body, expires_at = excluded.expires_at;
     END IF;
     RETURN QUERY SELECT current + n, first + n - 1;
   END $$ SET search_path FROM CURRENT;
   CREATE TABLE idempotency (
     key text PRIMARY KEY, fingerprint text NOT NULL, status integer NOT NULL,
     body json NOT NULL, expires_at text NOT NULL
   );
   CREATE INDEX idempotency_expiry ON idempotency (expires_at);
   CREATE TABLE read_models (
     projection text NOT NULL, key text COLLATE "C" NOT NULL, doc jsonb NOT NULL,
     PRIMARY KEY (projection, key)
   );
   CREATE TABLE checkpoints (projection text PRIMARY KEY, position bigint NOT NULL);`,
  // Idempotency-Keys are claimed before the request runs (IdempotencyRecord in port.ts); an append
  // replaces the claim only while it is still the request's (token), else SQLSTATE CF002 and
  // nothing is appended. Records written before this are final answers.
  `ALTER TABLE idempotency ADD COLUMN token text NOT NULL DEFAULT '', ADD COLUMN state text NOT NULL DEFAULT 'done';
   CREATE OR REPLACE FUNCTION append_events(p_stream text, p_expected text, p_ids text[], p_types text[], p_versions integer[],
                                            p_data json[], p_metadata json[], p_idempotency json)
   RETURNS TABLE (next_revision bigint, last_position bigint) LANGUAGE plpgsql AS $$
   DECLARE
     n integer := coalesce(array_length(p_ids, 1), 0);
     prior record;
     current bigint;
     first bigint;
   BEGIN
     IF n > 0 THEN
       SELECT e.stream, e.revision, e.position INTO prior FROM events e WHERE e.id = p_ids[1];
       IF FOUND AND prior.stream = p_stream THEN
         RETURN QUERY SELECT e.revision, e.position FROM events e WHERE e.id = ANY (ARRAY[p_ids[1], p_ids[n]]) ORDER BY e.position DESC LIMIT 1;
         RETURN;
       END IF;
     END IF;
     SELECT coalesce(max(e.revision), -1) INTO current FROM events e WHERE e.stream = p_stream;
     IF NOT (p_expected = 'any' OR (p_expected = 'no_stream' AND current = -1) OR (p_expected = 'stream_exists' AND current >= 0)
             OR (p_expected ~ '^-?[0-9]+$' AND p_expected::bigint = current)) THEN
       RAISE EXCEPTION 'wrong expected revision' USING ERRCODE = 'CF001', DETAIL = current::text;
     END IF;
     IF p_idempotency IS NOT NULL THEN
       UPDATE idempotency SET fingerprint = p_idempotency->>'fingerprint', state = p_idempotency->>'state',
         status = (p_idempotency->>'status')::integer, body = p_idempotency->'body', expires_at = p_idempotency->>'expires_at'
       WHERE key = p_idempotency->>'key' AND token = p_idempotency->>'token';
       IF NOT FOUND THEN
         RAISE EXCEPTION 'idempotency claim lost' USING ERRCODE = 'CF002';
       END IF;
     END IF;
     IF n = 0 THEN
       RETURN QUERY SELECT current, coalesce(max(e.position), 0) FROM events e;
       RETURN;
     END IF;
     first := reserve_positions(n);
     INSERT INTO events (position, stream, revision, id, type, version, data, metadata)
       SELECT first + i - 1, p_stream, current + i, p_ids[i], p_types[i], p_versions[i], p_data[i], p_metadata[i]
       FROM generate_series(1, n) AS i;
     RETURN QUERY SELECT current + n, first + n - 1;
   END $$ SET search_path FROM CURRENT;`,
  // Named sequences (reserveIds): the next integer of each.
  `CREATE TABLE sequences (name text PRIMARY KEY, next bigint NOT NULL);`,
  // Group commit: many appends (of any streams) in one statement and one transaction. Each append
  // runs in its own block (a savepoint): a failed check rolls back that append only and is
  // returned as its row's code (CF001 wrong revision, CF002 claim lost, 23505 unique violation,
  // 40P01 deadlock), the others commit. Positions for the whole batch are reserved first, before
  // anything else gives the transaction its id (see top); unused ones are gaps, never filled.
  `CREATE FUNCTION append_batch(p_streams text[], p_expected text[], p_counts integer[], p_idempotency json[],
                                p_ids text[], p_types text[], p_versions integer[], p_data json[], p_metadata json[])
   RETURNS TABLE (next_revision bigint, last_position bigint, code text, detail text, constraint_name text) LANGUAGE plpgsql AS $$
   DECLARE
     total integer := coalesce(array_length(p_ids, 1), 0);
     k integer;
     n integer;
     o integer := 0;
     pos bigint;
     prior_stream text;
     current bigint;
     idem json;
   BEGIN
     IF total > 0 THEN pos := reserve_positions(total); END IF;
     FOR k IN 1 .. coalesce(array_length(p_streams, 1), 0) LOOP
       n := p_counts[k];
       idem := p_idempotency[k];
       next_revision := NULL; last_position := NULL; code := NULL; detail := NULL; constraint_name := NULL;
       BEGIN
         prior_stream := NULL;
         IF n > 0 THEN
           SELECT e.stream INTO prior_stream FROM events e WHERE e.id = p_ids[o + 1];
         END IF;
         IF prior_stream = p_streams[k] THEN
           -- a retry of an append already stored: its original result
           SELECT e.revision, e.position INTO next_revision, last_position FROM events e
             WHERE e.id = ANY (ARRAY[p_ids[o + 1], p_ids[o + n]]) ORDER BY e.position DESC LIMIT 1;
         ELSE
           SELECT coalesce(max(e.revision), -1) INTO current FROM events e WHERE e.stream = p_streams[k];
           IF NOT (p_expected[k] = 'any' OR (p_expected[k] = 'no_stream' AND current = -1) OR (p_expected[k] = 'stream_exists' AND current >= 0)
                   OR (p_expected[k] ~ '^-?[0-9]+$' AND p_expected[k]::bigint = current)) THEN
             RAISE EXCEPTION 'wrong expected revision' USING ERRCODE = 'CF001', DETAIL = current::text;
           END IF;
           IF idem IS NOT NULL THEN
             UPDATE idempotency SET fingerprint = idem->>'fingerprint', state = idem->>'state',
               status = (idem->>'status')::integer, body = idem->'body', expires_at = idem->>'expires_at'
             WHERE key = idem->>'key' AND token = idem->>'token';
             IF NOT FOUND THEN
               RAISE EXCEPTION 'idempotency claim lost' USING ERRCODE = 'CF002';
             END IF;
           END IF;
           IF n = 0 THEN
             SELECT current, coalesce(max(e.position), 0) INTO next_revision, last_position FROM events e;
           ELSE
             INSERT INTO events (position, stream, revision, id, type, version, data, metadata)
               SELECT pos + i - 1, p_streams[k], current + i, p_ids[o + i], p_types[o + i], p_versions[o + i], p_data[o + i], p_metadata[o + i]
               FROM generate_series(1, n) AS i;
             next_revision := current + n;
             last_position := pos + n - 1;
             pos := pos + n;
           END IF;
         END IF;
       EXCEPTION WHEN unique_violation OR deadlock_detected OR SQLSTATE 'CF001' OR SQLSTATE 'CF002' THEN
         GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE, detail = PG_EXCEPTION_DETAIL, constraint_name = CONSTRAINT_NAME;
       END;
       o := o + n;
       RETURN NEXT;
     END LOOP;
   END $$ SET search_path FROM CURRENT;`,
  // append_batch with the events' data and metadata as one JSON array each: the client joins the
  // documents' JSON texts, instead of escaping each into an array literal (a large part of the
  // client's CPU per append). Elements of a json array keep their text byte for byte.
  `CREATE FUNCTION append_batch_json(p_streams text[], p_expected text[], p_counts integer[], p_idempotency json[],
                                     p_ids text[], p_types text[], p_versions integer[], p_data json, p_metadata json)
   RETURNS TABLE (next_revision bigint, last_position bigint, code text, detail text, constraint_name text) LANGUAGE sql AS $$
     SELECT * FROM append_batch(p_streams, p_expected, p_counts, p_idempotency, p_ids, p_types, p_versions,
                                ARRAY(SELECT d FROM json_array_elements(p_data) WITH ORDINALITY AS t(d, i) ORDER BY i),
                                ARRAY(SELECT m FROM json_array_elements(p_metadata) WITH ORDINALITY AS t(m, i) ORDER BY i))
   $$ SET search_path FROM CURRENT;`,
  // The group commit set-based: the batch's retry checks, stream heads, expected revisions and
  // idempotency records are looked at in one statement for all its appends, and every accepted
  // event goes in one multi-row INSERT; no block (savepoint) per append, whose start, commit and
  // PL/pgSQL statements were most of PostgreSQL's CPU per append. A failed check answers its own
  // append (CF001 with the actual revision as detail, CF002) and the others commit, as before.
  // Anything else the statement meets (another transaction took a revision or an event id
  // meanwhile: 23505, 40P01) fails the whole statement, hence its transaction: the adapter then
  // sends the batch to append_batch_json, in a new transaction. Never a second reserve_positions
  // in one transaction: positions reserved after a younger transaction's would break the rule of
  // the file's header. A batch naming a stream or an Idempotency-Key twice (its appends must see
  // each other's rows) goes to append_batch_json at once, before any position is reserved.
  // Planned once per connection (plan_cache_mode): with the default, PostgreSQL planned the
  // statement again for each batch (custom plans sized to the batch's arrays looked cheaper than the
  // generic one), which cost more CPU than running it; likewise append_batch's statements, once per
  // append. Each lookup is tied to its append (LATERAL, = ANY of the batch's keys), so the generic
  // plan looks rows up by index whatever the batch's size: a plan that joined the batch to the
  // events and idempotency tables by hashing a whole scan of them cost more as the tables grew.
  `CREATE FUNCTION append_batch_set(p_streams text[], p_expected text[], p_counts integer[], p_idempotency json[],
                                    p_ids text[], p_types text[], p_versions integer[], p_data json, p_metadata json)
   RETURNS TABLE (next_revision bigint, last_position bigint, code text, detail text, constraint_name text) LANGUAGE plpgsql AS $$
   DECLARE
     total integer := coalesce(array_length(p_ids, 1), 0);
     v_first bigint;
     v_data json[];
     v_meta json[];
     v_keys text[] := ARRAY(SELECT i->>'key' FROM unnest(p_idempotency) AS i WHERE i IS NOT NULL);
   BEGIN
     IF (SELECT count(DISTINCT s) <> count(*) FROM unnest(p_streams) AS s)
        OR (SELECT count(DISTINCT i->>'key') <> count(i) FROM unnest(p_idempotency) AS i) THEN
       RETURN QUERY SELECT * FROM append_batch_json(p_streams, p_expected, p_counts, p_idempotency, p_ids, p_types, p_versions, p_data, p_metadata);
       RETURN;
     END IF;
     IF total > 0 THEN v_first := reserve_positions(total); END IF;  -- first: it gives the transaction its id
     v_data := ARRAY(SELECT d FROM json_array_elements(p_data) WITH ORDINALITY AS t(d, i) ORDER BY i);
     v_meta := ARRAY(SELECT m FROM json_array_elements(p_metadata) WITH ORDINALITY AS t(m, i) ORDER BY i);
     RETURN QUERY
     WITH a AS (         -- the appends in order; o: how many events of the batch come before
       SELECT t.k, t.s, t.x, t.n, t.idem, (sum(t.n) OVER (ORDER BY t.k) - t.n)::integer AS o
       FROM unnest(p_streams, p_expected, p_counts, p_idempotency) WITH ORDINALITY AS t(s, x, n, idem, k)
     ), prior AS (       -- retries: the first event is already stored in this stream; the original result
       SELECT a.k, r.revision, r.position
       FROM a CROSS JOIN LATERAL (SELECT e.revision, e.position FROM events e
                                  WHERE e.id = ANY (ARRAY[p_ids[a.o + 1], p_ids[a.o + a.n]])
                                    AND EXISTS (SELECT FROM events f WHERE f.id = p_ids[a.o + 1] AND f.stream = a.s)
                                  ORDER BY e.position DESC LIMIT 1) AS r
       WHERE a.n > 0
     ), h AS (           -- the others: their stream's head, and whether it is the expected one
       SELECT a.*, hd.head,
              CASE WHEN a.x = 'any' THEN true WHEN a.x = 'no_stream' THEN hd.head = -1 WHEN a.x = 'stream_exists' THEN hd.head >= 0
                   WHEN a.x ~ '^-?[0-9]+$' THEN a.x::bigint = hd.head ELSE false END AS expected
       FROM a CROSS JOIN LATERAL (SELECT coalesce(max(e.revision), -1) AS head FROM events e WHERE e.stream = a.s) AS hd
       WHERE a.k NOT IN (SELECT prior.k FROM prior)
     ), claimed AS (     -- idempotency records replaced while the claim is still the request's (token)
       UPDATE idempotency AS i SET fingerprint = h.idem->>'fingerprint', state = h.idem->>'state',
         status = (h.idem->>'status')::integer, body = h.idem->'body', expires_at = h.idem->>'expires_at'
       FROM h WHERE i.key = ANY (v_keys) AND h.expected AND h.idem IS NOT NULL AND i.key = h.idem->>'key' AND i.token = h.idem->>'token'
       RETURNING h.k
     ), ok AS (          -- the accepted appends; taken: positions taken by the accepted ones before
       SELECT h.k, h.n, h.o, h.s, h.head, sum(h.n) OVER (ORDER BY h.k) - h.n AS taken
       FROM h WHERE h.expected AND (h.idem IS NULL OR h.k IN (SELECT claimed.k FROM claimed))
     ), inserted AS (
       INSERT INTO events (position, stream, revision, id, type, version, data, metadata)
       SELECT v_first + ok.taken + j - 1, ok.s, ok.head + j, p_ids[ok.o + j], p_types[ok.o + j], p_versions[ok.o + j], v_data[ok.o + j], v_meta[ok.o + j]
       FROM ok CROSS JOIN LATERAL generate_series(1, ok.n) AS j
     )
     SELECT coalesce(prior.revision, CASE WHEN ok.k IS NOT NULL THEN ok.head + ok.n END),
            coalesce(prior.position, CASE WHEN ok.n > 0 THEN v_first + ok.taken + ok.n - 1
                                          WHEN ok.k IS NOT NULL THEN (SELECT coalesce(max(e.position), 0) FROM events e) END),
            CASE WHEN prior.k IS NOT NULL OR ok.k IS NOT NULL THEN NULL WHEN NOT h.expected THEN 'CF001' ELSE 'CF002' END,
            CASE WHEN prior.k IS NULL AND ok.k IS NULL AND NOT h.expected THEN h.head::text END,
            NULL::text
     FROM a LEFT JOIN prior ON prior.k = a.k LEFT JOIN h ON h.k = a.k LEFT JOIN ok ON ok.k = a.k
     ORDER BY a.k;
   END $$ SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan;
   ALTER FUNCTION append_batch(text[], text[], integer[], json[], text[], text[], integer[], json[], json[]) SET plan_cache_mode = force_generic_plan;`,
];

async function migrate(pool: pg.Pool, schema: string): Promise<void> {
  await inTransaction(pool, async (client) => {
    // Serialises processes that start together: each step runs once, whoever comes first.
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`cardflow.migrate.${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ v: number | null }>("SELECT max(version) AS v FROM migrations");
    const steps = migrations(schema);
    for (let v = rows[0]?.v ?? 0; v < steps.length; v++) {
      await client.query(steps[v]!);
      await client.query("INSERT INTO migrations (version) VALUES ($1)", [v + 1]);
    }
  });
}

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
const translated = (e: unknown) => (isConnectionError(e) ? new StoreUnavailable("PostgreSQL cannot be reached", { cause: e }) : e);

/**
 * A transaction on a pooled client. A checked-out client has no 'error' listener of the pool's:
 * ours records that the connection dropped (pg_terminate_backend, a restart), so the client is
 * discarded, not reused (every client also has a permanent one: createPostgresStore).
 */
async function inTransaction<T>(pool: pg.Pool, work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect().catch((e: unknown) => {
    throw translated(e);
  });
  let broken: unknown;
  const onError = (e: unknown) => void (broken = e);
  client.on("error", onError);
  try {
    await client.query("BEGIN");
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

const COLUMNS = "position, stream, revision, id, type, version, data::text AS data, metadata::text AS metadata";

/** Batches of appends in flight at once (each its own connection), and appends per batch. */
const BATCHES_IN_FLIGHT = 2;
const MAX_BATCH = 256;

export async function createPostgresStore({ connectionString, schema = "cardflow", poolSize = 10, pollMs = 1_000, connectionTimeoutMillis = 5_000 }: PostgresStoreOptions): Promise<PostgresStore> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name: ${schema}`);
  // connectionTimeoutMillis: while the database is away, a request waits this long for a
  // connection, then gets a 503 (StoreUnavailable), instead of waiting forever.
  const pool = new pg.Pool({ connectionString, max: poolSize, options: `-c search_path=${schema}`, connectionTimeoutMillis });
  pool.on("error", () => undefined); // an idle client lost its connection; the pool replaces it
  // Every client also keeps a listener of its own for life: the pool removes its idle listener
  // when it hands a client over, and our listener (inTransaction) comes a microtask later, after
  // the rest of the socket chunk is parsed. A chunk ending a query with the server's "terminating
  // connection" (pg_terminate_backend, a restart) emitted that error on a client without any
  // listener, which ended the process. The client is then unusable; its next query fails, as a
  // connection error (StoreUnavailable), and it is discarded.
  pool.on("connect", (client) => client.on("error", () => undefined));
  try {
    await migrate(pool, schema);
  } catch (e) {
    await pool.end();
    throw e;
  }

  /** Every statement outside a transaction goes through here (connection errors translated). */
  const run = <R extends pg.QueryResultRow>(text: string, values: unknown[] = [], name?: string) =>
    pool.query<R>({ text, values, name }).catch((e: unknown) => {
      throw translated(e);
    });
  const query = <R extends pg.QueryResultRow>(sql: string, params: unknown[] = [], name?: string) => run<R>(sql, params, name).then((r) => r.rows);

  /** The original result of an append whose first event is already stored in this stream. */
  async function priorResult(stream: string, events: EventData[]): Promise<AppendResult | undefined> {
    if (events.length === 0) return undefined;
    const rows = await query<{ stream: string; revision: string; position: string }>(
      "SELECT stream, revision, position FROM events WHERE id = ANY($1) ORDER BY position",
      [[events[0]!.id, events[events.length - 1]!.id]],
    );
    const first = rows[0];
    if (!first || first.stream !== stream) return undefined;
    const last = rows[rows.length - 1]!;
    return { nextRevision: Number(last.revision), position: Number(last.position) };
  }

  const lastRevision = async (stream: string) =>
    Number((await query<{ r: string }>("SELECT coalesce(max(revision), -1) AS r FROM events WHERE stream = $1", [stream]))[0]!.r);

  /** What one append of a batch came to: its result, or the SQLSTATE that refused it (append_batch). */
  interface Outcome {
    next_revision: string | null;
    last_position: string | null;
    code: string | null;
    detail: string | null;
    constraint_name: string | null;
  }
  interface Pending {
    stream: string;
    events: EventData[];
    options: AppendOptions;
    settle: (o: Outcome) => void;
    fail: (e: unknown) => void;
  }

  // Group commit: an append that arrives while batches are in flight waits for the next one, so
  // many appends (of any streams) share one round trip and one commit (one WAL flush).
  const queue: Pending[] = [];
  let inFlight = 0;
  function flush() {
    while (inFlight < BATCHES_IN_FLIGHT && queue.length > 0) {
      const batch = queue.splice(0, MAX_BATCH);
      inFlight++;
      void commitAppends(batch).finally(() => {
        inFlight--;
        flush();
      });
    }
  }

  /**
   * One statement for the batch: append_batch_set, or append_batch_json (a block per append) when
   * the set-based statement failed as a whole. An error append_batch_json does not turn into a row
   * (not one of a connection) may be one append's own: each goes again alone, so it fails only its
   * own caller.
   */
  async function commitAppends(batch: Pending[], fn: "append_batch_set" | "append_batch_json" = "append_batch_set") {
    const all = batch.flatMap((p) => p.events);
    try {
      const { rows } = await run<Outcome>(
        `SELECT * FROM ${fn}($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          batch.map((p) => p.stream),
          batch.map((p) => String(p.options.expectedRevision)),
          batch.map((p) => p.events.length),
          batch.map((p) => (p.options.idempotency ? JSON.stringify(p.options.idempotency) : null)),
          all.map((e) => e.id),
          all.map((e) => e.type),
          all.map((e) => e.version),
          `[${all.map((e) => JSON.stringify(e.data)).join(",")}]`,
          `[${all.map((e) => JSON.stringify(e.metadata)).join(",")}]`,
        ],
        `cardflow_${fn}`,
      );
      batch.forEach((p, i) => p.settle(rows[i]!));
      const committed = Math.max(0, ...rows.map((r) => (r.code === null ? Number(r.last_position) : 0)));
      pump.notify(committed);
      signal.send(committed);
    } catch (e) {
      if (e instanceof StoreUnavailable) for (const p of batch) p.fail(e);
      else if (fn === "append_batch_set") await commitAppends(batch, "append_batch_json");
      else if (batch.length > 1) for (const p of batch) void commitAppends([p], "append_batch_json");
      else for (const p of batch) p.fail(e);
    }
  }

  const appendOnce = (stream: string, events: EventData[], options: AppendOptions) =>
    new Promise<Outcome>((settle, fail) => {
      queue.push({ stream, events, options, settle, fail });
      flush();
    });

  const saveIdempotency = async (r: IdempotencyRecord) =>
    ((
      await run("UPDATE idempotency SET fingerprint = $1, state = $2, status = $3, body = $4, expires_at = $5 WHERE key = $6 AND token = $7", [
        r.fingerprint,
        r.state,
        r.status,
        JSON.stringify(r.body),
        r.expires_at,
        r.key,
        r.token,
      ])
    ).rowCount ?? 0) > 0;

  const IDEMPOTENCY_COLUMNS = "key, fingerprint, token, state, status, body, expires_at";

  async function readIdempotency(key: string): Promise<IdempotencyRecord | undefined> {
    const [r] = await query<IdempotencyRecord>(`SELECT ${IDEMPOTENCY_COLUMNS} FROM idempotency WHERE key = $1`, [key]);
    return r;
  }

  // Only rows of transactions older than every running one: they can no longer change (see top).
  const readAllVisible = async (after: number, maxCount: number) =>
    (
      await query<EventRow>(
        `SELECT ${COLUMNS} FROM events
         WHERE position > $1 AND tx < pg_snapshot_xmin(pg_current_snapshot())
         ORDER BY position LIMIT $2`,
        [after, maxCount],
        "cardflow_read_all",
      )
    ).map(toRecorded);

  let closing = false;
  const pump = createPump((after, maxCount) => (closing ? Promise.resolve([]) : readAllVisible(after, maxCount)), { pollMs });
  // Channel names are identifiers (at most 63 bytes): schemas sharing a long prefix only wake each other for nothing.
  const signal = createAppendSignal({ connectionString, channel: `cardflow_${schema}`.slice(0, 63), onAppended: (position) => pump.notify(position) });

  const release = sharedConnection(() => pool.end());
  let eventsClosed = false;

  const events: EventStore = {
    async append(stream, events, options) {
      if (eventsClosed) throw new Error("PostgreSQL event store is closed");
      for (;;) {
        const o = await appendOnce(stream, events, options);
        if (o.code === null) return { nextRevision: Number(o.next_revision), position: Number(o.last_position) };
        // A concurrent retry of the same events won the race: return what it stored.
        if (o.code === "23505" && o.constraint_name === "events_id_key") {
          const prior = await priorResult(stream, events);
          if (prior) return prior;
          throw new Error(`append to ${stream}: an event id is already stored in another stream (${o.detail})`);
        }
        if (o.code === "CF002") throw new IdempotencyClaimLost(options.idempotency!.key);
        if (o.code === "CF001") throw new WrongExpectedRevision(stream, options.expectedRevision, Number(o.detail));
        // Another transaction took the revision we read (or a deadlock between two of them, both
        // over the same stream). "any" and "stream_exists" still hold: try again.
        const { expectedRevision } = options;
        if (o.code === "40P01" || expectedRevision === "any" || expectedRevision === "stream_exists") continue;
        throw new WrongExpectedRevision(stream, expectedRevision, await lastRevision(stream));
      }
    },
    async readStream(stream, options) {
      const { forwards, from, maxCount } = streamRange(options);
      const range = forwards ? "revision >= $2 ORDER BY revision" : "revision <= $2 ORDER BY revision DESC";
      return (await query<EventRow>(`SELECT ${COLUMNS} FROM events WHERE stream = $1 AND ${range} LIMIT $3`, [stream, from, maxCount], `cardflow_read_stream_${forwards ? "f" : "b"}`)).map(
        toRecorded,
      );
    },
    async readAll({ after = 0, maxCount = Number.MAX_SAFE_INTEGER } = {}) {
      return readAllVisible(after, maxCount);
    },
    subscribeToAll(options, onEvent) {
      return pump.subscribe(options, onEvent);
    },
    async claimIdempotency(claim, now) {
      for (;;) {
        // The key's primary key refuses a second claimant; a record that no longer holds its key
        // (holdsKey in port.ts) is replaced in the same statement.
        const claimed = await query(
          `INSERT INTO idempotency AS i (${IDEMPOTENCY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (key) DO UPDATE SET fingerprint = excluded.fingerprint, token = excluded.token, state = excluded.state,
             status = excluded.status, body = excluded.body, expires_at = excluded.expires_at
           WHERE ${RELEASED_SQL("i", "$8")}
           RETURNING key`,
          [claim.key, claim.fingerprint, claim.token, claim.state, claim.status, JSON.stringify(claim.body), claim.expires_at, now],
        );
        if (claimed.length > 0) return undefined;
        const held = await readIdempotency(claim.key);
        if (held) return held;
        // released between the two statements: claim again
      }
    },
    saveIdempotency,
    async releaseIdempotency(key, token, expires_at) {
      await inTransaction(pool, async (c) => {
        await c.query("DELETE FROM idempotency WHERE key = $1 AND token = $2 AND state = 'in_flight' AND status = 0", [key, token]);
        await c.query("UPDATE idempotency SET state = 'done', expires_at = $3 WHERE key = $1 AND token = $2 AND state = 'in_flight'", [key, token, expires_at]);
      });
    },
    readIdempotency,
    async reserveIds(sequence, count) {
      const [r] = await query<{ next: string }>(
        "INSERT INTO sequences AS s (name, next) VALUES ($1, 1 + $2::bigint) ON CONFLICT (name) DO UPDATE SET next = s.next + $2::bigint RETURNING next",
        [sequence, count],
      );
      return Number(r!.next) - count;
    },
    async purgeIdempotency(now) {
      return (await run(`DELETE FROM idempotency i WHERE ${RELEASED_SQL("i", "$1")}`, [now])).rowCount ?? 0;
    },
    close: release(async () => {
      eventsClosed = true;
      closing = true;
      await Promise.all([pump.closeAll(), signal.close()]);
    }),
  };

  const readModels: ReadModelStore = {
    async checkpoint(projection) {
      const [r] = await query<{ position: string }>("SELECT position FROM checkpoints WHERE projection = $1", [projection], "cardflow_checkpoint");
      return r ? Number(r.position) : 0;
    },
    async get<T>(projection: string, key: string) {
      const [r] = await query<{ doc: T }>("SELECT doc FROM read_models WHERE projection = $1 AND key = $2", [projection, key], "cardflow_get");
      return r?.doc;
    },
    async getMany<T>(projection: string, keys: readonly string[]) {
      if (keys.length === 0) return new Map<string, T>();
      const rows = await query<{ key: string; doc: T }>("SELECT key, doc FROM read_models WHERE projection = $1 AND key = ANY($2::text[])", [projection, keys]);
      return new Map(rows.map((r) => [r.key, r.doc]));
    },
    async list<T>(projection: string, keyPrefix: string, { after = "", limit }: ListPage = {}) {
      // key >= prefix uses the primary key; left() keeps the match literal (no LIKE wildcards).
      const rows = await query<{ doc: T }>(
        "SELECT doc FROM read_models WHERE projection = $1 AND key >= $2 AND left(key, length($2)) = $2 AND key > $3 ORDER BY key LIMIT $4",
        [projection, keyPrefix, after, limit ?? null],
      );
      return rows.map((r) => r.doc);
    },
    async count(projection) {
      const [r] = await query<{ n: string }>("SELECT count(*) AS n FROM read_models WHERE projection = $1", [projection]);
      return Number(r!.n);
    },
    async commitBatch(commits) {
      await inTransaction(pool, async (c) => {
        // Read models are rebuilt from the events: their commit need not wait for the WAL flush
        // (docs/stores.md; the next append's synchronous commit flushes it).
        await c.query("SET LOCAL synchronous_commit = off");
        // One committer per projection at a time (also when its checkpoint row does not exist yet);
        // locks taken in name order, so two batches over the same projections cannot deadlock.
        const checked = commits.filter((x) => x.expectedCheckpoint !== undefined).sort((a, b) => (a.projection < b.projection ? -1 : a.projection > b.projection ? 1 : 0));
        for (const { projection } of checked) await c.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`cardflow.read_models.${schema}.${projection}`]);
        if (checked.length > 0) {
          const { rows } = await c.query<{ projection: string; position: string }>("SELECT projection, position FROM checkpoints WHERE projection = ANY($1::text[])", [
            checked.map((x) => x.projection),
          ]);
          const stored = new Map(rows.map((r) => [r.projection, Number(r.position)]));
          for (const { projection, expectedCheckpoint } of checked) checkCheckpoint(projection, expectedCheckpoint, stored.get(projection) ?? 0);
        }
        const docs = commits.flatMap(({ projection, docs }) => docs.map((d) => ({ projection, key: d.key, doc: JSON.stringify(d.doc) })));
        if (docs.length > 0) {
          // the documents as one JSON array (joined texts), not an array literal escaped by the client
          await c.query(
            `INSERT INTO read_models (projection, key, doc)
             SELECT p, k, d FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(p, k, i) JOIN jsonb_array_elements($3::jsonb) WITH ORDINALITY AS y(d, j) ON i = j
             ON CONFLICT (projection, key) DO UPDATE SET doc = excluded.doc`,
            [docs.map((d) => d.projection), docs.map((d) => d.key), `[${docs.map((d) => d.doc).join(",")}]`],
          );
        }
        if (commits.length > 0) {
          await c.query(
            `INSERT INTO checkpoints (projection, position) SELECT * FROM unnest($1::text[], $2::bigint[])
             ON CONFLICT (projection) DO UPDATE SET position = excluded.position`,
            [commits.map((x) => x.projection), commits.map((x) => x.checkpoint)],
          );
        }
      });
    },
    async reset(projection) {
      await inTransaction(pool, async (c) => {
        await c.query("DELETE FROM read_models WHERE projection = $1", [projection]);
        await c.query("DELETE FROM checkpoints WHERE projection = $1", [projection]);
      });
    },
    close: release(),
  };

  return { events, readModels };
}
