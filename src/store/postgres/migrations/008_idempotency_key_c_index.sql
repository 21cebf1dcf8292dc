-- The per-account cap of Idempotency-Key records counts one account's keys (prefix "<account>:"):
-- a range in byte order, which the primary key's collation does not give; this index does.
CREATE INDEX IF NOT EXISTS idempotency_key_c ON idempotency ((key COLLATE "C"));
