-- One expected-revision check for the PostgreSQL store: expected_revision_holds(expected, head),
-- called by both group commits (append_batch_set, and append_batch under append_batch_json), which
-- each spelled it out. A SQL function without SET clauses is inlined where it is called, so the
-- set-based statement's plan is the one it had. append_events (migrations 1 and 2), the append of
-- one stream that the group commit (migration 4) replaced, was never called since: dropped.
DROP FUNCTION IF EXISTS append_events(text, text, text[], text[], integer[], json[], json[], json);
CREATE FUNCTION expected_revision_holds(p_expected text, p_head bigint) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_expected = 'any' THEN true
              WHEN p_expected = 'no_stream' THEN p_head = -1
              WHEN p_expected = 'stream_exists' THEN p_head >= 0
              WHEN p_expected ~ '^-?[0-9]+$' THEN p_expected::bigint = p_head
              ELSE false END
$$;
   CREATE OR REPLACE FUNCTION append_batch(p_streams text[], p_expected text[], p_counts integer[], p_idempotency json[],
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
           IF NOT expected_revision_holds(p_expected[k], current) THEN
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
   END $$ SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan;
   CREATE OR REPLACE FUNCTION append_batch_set(p_streams text[], p_expected text[], p_counts integer[], p_idempotency json[],
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
              expected_revision_holds(a.x, hd.head) AS expected
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
