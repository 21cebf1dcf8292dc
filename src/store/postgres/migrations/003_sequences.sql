-- Named sequences (reserveIds): the next integer of each.
CREATE TABLE sequences (name text PRIMARY KEY, next bigint NOT NULL);
