-- Each read model's version and shape (documents, or a table's columns and indexes): a read model
-- stored at another version or shape is dropped and folded again from the events at start.
-- Read models without a row were written before versions: documents at version 1.
CREATE TABLE read_model_versions (projection text PRIMARY KEY, version integer NOT NULL, shape text NOT NULL);
