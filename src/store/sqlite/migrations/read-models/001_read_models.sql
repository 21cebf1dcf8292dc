-- A rowid table keeps documents out of the key B-tree (WITHOUT ROWID suits small rows only).
CREATE TABLE read_models (
     projection TEXT NOT NULL, key TEXT NOT NULL, doc TEXT NOT NULL,
     PRIMARY KEY (projection, key)
   );
   CREATE TABLE checkpoints (projection TEXT PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID;
