CREATE TABLE events (
     position INTEGER PRIMARY KEY,          -- rowid: assigned in commit order by the single writer
     stream   TEXT NOT NULL,
     revision INTEGER NOT NULL,
     id       TEXT NOT NULL UNIQUE,
     type     TEXT NOT NULL,
     version  INTEGER NOT NULL,
     data     TEXT NOT NULL,
     metadata TEXT NOT NULL,
     UNIQUE (stream, revision)
   );
   CREATE TABLE idempotency (
     key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, status INTEGER NOT NULL,
     body TEXT NOT NULL, expires_at TEXT NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX idempotency_expiry ON idempotency (expires_at);
   CREATE TABLE read_models (
     projection TEXT NOT NULL, key TEXT NOT NULL, doc TEXT NOT NULL,
     PRIMARY KEY (projection, key)
   ) WITHOUT ROWID;
   CREATE TABLE checkpoints (projection TEXT PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID;
