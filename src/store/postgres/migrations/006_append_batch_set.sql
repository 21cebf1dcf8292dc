-- The group commit set-based: the batch's retry checks, stream heads, expected revisions and
-- idempotency records are looked at in one statement for all its appends, and every accepted
-- event goes in one multi-row INSERT; no block (savepoint) per append, whose start, commit and
-- PL/pgSQL statements were most of PostgreSQL's CPU per append. A failed check answers its own
-- append (CF001 with the actual revision as detail, CF002) and the others commit, as before.
-- Anything else the statement meets (another transaction took a revision or an event id
-- meanwhile: 23505, 40P01) fails the whole statement, hence its transaction: the adapter then
-- sends the batch to append_batch_json, in a new transaction. Never a second reserve_positions
-- in one transaction: positions reserved after a younger transaction's would break the rule of
-- the file's header. A batch naming a stream or an Idempotency-Key twice (its appends must see
-- each other's rows) goes to append_batch_json at once, before any position is reserved.
-- Planned once per connection (plan_cache_mode): with the default, PostgreSQL planned the
-- statement again for each batch (custom plans sized to the batch's arrays looked cheaper than the
-- generic one), which cost more CPU than running it; likewise append_batch's statements, once per
-- append. Each lookup is tied to its append (LATERAL, = ANY of the batch's keys), so the generic
-- plan looks rows up by index whatever the batch's size: a plan that joined the batch to the
-- events and idempotency tables by hashing a whole scan of them cost more as the tables grew.
CREATE FUNCTION append_batch_set(p_streams text[], p_expected text[], p_counts integer[], p_idempotency json[],
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
   ALTER FUNCTION append_batch(text[], text[], integer[], json[], text[], text[], integer[], json[], json[]) SET plan_cache_mode = force_generic_plan;
