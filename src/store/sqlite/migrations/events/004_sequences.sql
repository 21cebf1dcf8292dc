-- Named sequences (reserveIds): the next integer of each.
CREATE TABLE sequences (name TEXT PRIMARY KEY, next INTEGER NOT NULL) WITHOUT ROWID;
