-- Group commit: many appends (of any streams) in one statement and one transaction. Each append
-- runs in its own block (a savepoint): a failed check rolls back that append only and is
-- returned as its row's code (CF001 wrong revision, CF002 claim lost, 23505 unique violation,
-- 40P01 deadlock), the others commit. Positions for the whole batch are reserved first, before
-- anything else gives the transaction its id (see top); unused ones are gaps, never filled.
CREATE FUNCTION append_batch(p_streams text[], p_expected text[], p_counts integer[], p_idempotency json[],
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
   END $$ SET search_path FROM CURRENT;
