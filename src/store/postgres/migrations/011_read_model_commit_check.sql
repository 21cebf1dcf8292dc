-- A read-model commit's check in one round trip (was two): the committers' advisory locks, taken in
-- the order given (names sorted by the caller, so two commits cannot deadlock), then the
-- checkpoints they guard, read by a statement of this VOLATILE function, whose snapshot is taken
-- after the locks were granted (a plain statement's is taken before its own locks).
CREATE FUNCTION read_model_commit_check(p_locks text[], p_projections text[])
   RETURNS TABLE (checked_projection text, checked_position bigint) LANGUAGE plpgsql VOLATILE AS $$
   BEGIN
     PERFORM pg_advisory_xact_lock(hashtext(l.name)) FROM unnest(p_locks) WITH ORDINALITY AS l(name, i) ORDER BY l.i;
     RETURN QUERY SELECT c.projection, c.position FROM checkpoints c WHERE c.projection = ANY (p_projections);
   END $$;
