-- A group commit holding one append (every commit at concurrency 1, most at low load) goes through
-- append_one: the same checks, records and answer as append_batch_set, written as plain PL/pgSQL
-- statements on that one stream instead of the set-based statement's CTEs, window functions,
-- sorts and merge joins, planned for any batch size. Measured with synchronous_commit off (so the
-- execution, not the WAL flush): about 0.6-0.9 ms less per append (scripts/bench/analysis.md,
-- round 3). Anything it does not turn into a row (23505, 40P01) fails the statement, and the
-- adapter sends the append to append_batch_json, as for append_batch_set.
CREATE FUNCTION append_one(p_stream text, p_expected text, p_idempotency json,
                           p_ids text[], p_types text[], p_versions integer[], p_data json, p_metadata json)
   RETURNS TABLE (next_revision bigint, last_position bigint, code text, detail text, constraint_name text) LANGUAGE plpgsql AS $$
   DECLARE
     n integer := coalesce(array_length(p_ids, 1), 0);
     v_head bigint;
     v_first bigint;
   BEGIN
     IF n > 0 AND EXISTS (SELECT FROM events f WHERE f.id = p_ids[1] AND f.stream = p_stream) THEN
       -- a retry of an append already stored: its original result
       RETURN QUERY SELECT e.revision, e.position, NULL::text, NULL::text, NULL::text FROM events e
         WHERE e.id = ANY (ARRAY[p_ids[1], p_ids[n]]) ORDER BY e.position DESC LIMIT 1;
       RETURN;
     END IF;
     IF n > 0 THEN v_first := reserve_positions(n); END IF;  -- before any write: it gives the transaction its id
     SELECT coalesce(max(e.revision), -1) INTO v_head FROM events e WHERE e.stream = p_stream;
     IF NOT expected_revision_holds(p_expected, v_head) THEN
       RETURN QUERY SELECT NULL::bigint, NULL::bigint, 'CF001'::text, v_head::text, NULL::text;
       RETURN;
     END IF;
     IF p_idempotency IS NOT NULL THEN
       UPDATE idempotency SET fingerprint = p_idempotency->>'fingerprint', state = p_idempotency->>'state',
         status = (p_idempotency->>'status')::integer, body = p_idempotency->'body', expires_at = p_idempotency->>'expires_at'
       WHERE key = p_idempotency->>'key' AND token = p_idempotency->>'token';
       IF NOT FOUND THEN
         RETURN QUERY SELECT NULL::bigint, NULL::bigint, 'CF002'::text, NULL::text, NULL::text;
         RETURN;
       END IF;
     END IF;
     IF n = 0 THEN
       RETURN QUERY SELECT v_head, (SELECT coalesce(max(e.position), 0) FROM events e), NULL::text, NULL::text, NULL::text;
       RETURN;
     END IF;
     INSERT INTO events (position, stream, revision, id, type, version, data, metadata)
       SELECT v_first + x.j - 1, p_stream, v_head + x.j, p_ids[x.j], p_types[x.j], p_versions[x.j], x.d, y.m
       FROM json_array_elements(p_data) WITH ORDINALITY AS x(d, j) JOIN json_array_elements(p_metadata) WITH ORDINALITY AS y(m, k) ON x.j = y.k;
     RETURN QUERY SELECT v_head + n, v_first + n - 1, NULL::text, NULL::text, NULL::text;
   END $$ SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan;
