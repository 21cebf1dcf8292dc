-- Idempotency-Keys are claimed before the request runs (IdempotencyRecord in port.ts); an append
-- replaces the claim only while it is still the request's (token), else SQLSTATE CF002 and
-- nothing is appended. Records written before this are final answers.
ALTER TABLE idempotency ADD COLUMN token text NOT NULL DEFAULT '', ADD COLUMN state text NOT NULL DEFAULT 'done';
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
   END $$ SET search_path FROM CURRENT;
