-- fencekeeper journal, schema version 10: the chain hash stored as its 32
-- bytes (issue 36: at most 1 KiB of journal file per sandbox lifecycle).
--
-- `journal.hash` was 64 lowercase hex digits in a TEXT column; it is now the
-- same SHA3-256 digest as a 32-byte BLOB (33 bytes less in each row, five
-- rows per sandbox lifecycle). The chain does not change: a row's canonical
-- form still spells the previous row's hash as 64 lowercase hex digits
-- (lower(hex(hash))), so every hash of an upgraded journal is the one it had,
-- and a head kept off the volume before the upgrade still verifies. The view
-- `journal_head` still shows the head as 64 hex digits.
--
-- A STRICT table cannot change a column's type: the rows are copied to a new
-- `journal`, converted with unhex() (SQLite 3.41 and later have it; on an
-- older library fencekeeper supplies it, src/journal/migrations.cc). The copy
-- needs the journal table's size again in free space, once.
--
-- After this migration commits, fencekeeper switches the file to
-- auto_vacuum = INCREMENTAL with one VACUUM (it cannot run in a transaction;
-- src/journal/migrations.cc, UseIncrementalVacuum): from then on an idle
-- checkpoint gives the pages retention and forgotten sandboxes freed back to
-- the volume. A new journal is created that way.

CREATE TEMP TABLE journal_v9 AS SELECT seq, at, kind, subject, ref, body, hash FROM journal;
DROP TABLE journal;

CREATE TABLE journal (
  seq     INTEGER PRIMARY KEY,              -- the seq of the row's first event
  at      INTEGER NOT NULL,                 -- recorded_at: ms since the epoch, UTC
  kind    INTEGER NOT NULL,                 -- journal_kinds.kind
  subject INTEGER NOT NULL REFERENCES subjects (id),
  ref     INTEGER,                          -- suspend_outcome: the seq of its intent
  body    TEXT    NOT NULL CHECK (json_valid(body)),
  hash    BLOB    CHECK (hash IS NULL OR length(hash) = 32)  -- SHA3-256, NULL before schema 6
) STRICT;

INSERT INTO journal (seq, at, kind, subject, ref, body, hash)
SELECT seq, at, kind, subject, ref, body, unhex(hash) FROM temp.journal_v9 ORDER BY seq;
DROP TABLE temp.journal_v9;

CREATE INDEX journal_by_subject ON journal (subject, seq);
CREATE INDEX journal_by_ref ON journal (ref) WHERE ref IS NOT NULL;
CREATE INDEX journal_pruned ON journal (seq) WHERE kind = 10;

CREATE TRIGGER journal_append_only_update BEFORE UPDATE ON journal
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: UPDATE is not allowed');
END;

CREATE TRIGGER journal_append_only_delete BEFORE DELETE ON journal
WHEN OLD.seq > (SELECT COALESCE(max(json_extract(body, '$.l')), 0) FROM
                (SELECT body FROM journal WHERE kind = 10 ORDER BY seq DESC LIMIT 1))
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: DELETE is allowed only of rows a pruned record covers');
END;

-- The last chained row, its hash as 64 lowercase hex digits as before.
DROP VIEW journal_head;
CREATE VIEW journal_head AS
SELECT seq, lower(hex(hash)) AS hash FROM journal WHERE hash IS NOT NULL ORDER BY seq DESC LIMIT 1;
