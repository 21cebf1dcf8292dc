-- Idempotency-Keys are claimed before the request runs (IdempotencyRecord): records written
-- before this are final answers.
ALTER TABLE idempotency ADD COLUMN token TEXT NOT NULL DEFAULT '';
   ALTER TABLE idempotency ADD COLUMN state TEXT NOT NULL DEFAULT 'done';
