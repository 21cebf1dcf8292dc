CREATE TABLE events (
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
     PERFORM pg_advisory_lock(hashtext('cardflow.positions.{{schema}}'));
     PERFORM pg_current_xact_id();                      -- take the transaction id under the lock
     first := nextval('events_position_seq');
     IF n > 1 THEN PERFORM setval('events_position_seq', first + n - 1); END IF;
     PERFORM pg_advisory_unlock(hashtext('cardflow.positions.{{schema}}'));
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
   CREATE TABLE checkpoints (projection text PRIMARY KEY, position bigint NOT NULL);
