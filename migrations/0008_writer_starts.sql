-- fencekeeper journal, schema version 8: every row names its writer (issue 19).
--
-- Until now only suspend intents carried the writer id of the `run` process
-- that appended them. `run` now records each start here once it holds the
-- writer lock, before it appends anything: `first_seq` is the first seq that
-- writer may append (the journal's last seq + 1 at that start), so a row's
-- writer is the writer of the latest start whose first_seq <= its seq.
-- Two starts with nothing appended between them share a first_seq; the later
-- (greater `start`) is the one that wrote what follows. Rows are tiny and
-- append-only: retention keeps them all, so a kept row never loses its writer.
CREATE TABLE writer_starts (
  start      INTEGER PRIMARY KEY,   -- the starts in order
  first_seq  INTEGER NOT NULL,      -- the first seq this writer may append
  writer     TEXT    NOT NULL,      -- the writer id (docs/transitions.md#the-writer-id)
  started_at TEXT    NOT NULL       -- RFC 3339 UTC
) STRICT;

CREATE INDEX writer_starts_seq ON writer_starts (first_seq);

CREATE TRIGGER writer_starts_append_only_update BEFORE UPDATE ON writer_starts
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper writer starts are append-only');
END;

CREATE TRIGGER writer_starts_append_only_delete BEFORE DELETE ON writer_starts
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper writer starts are append-only');
END;
