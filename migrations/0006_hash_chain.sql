-- fencekeeper journal, schema version 6: tamper evidence (issue 18).
--
-- Every row of `journal` appended from this version on carries `hash`, the
-- SHA3-256 (64 lowercase hex digits) of the previous row's hash and the row's
-- canonical form (src/journal/chain.h, docs/journal-chain.md). The chain
-- starts at this upgrade: rows appended before it, and the rows of schema
-- 1-4 in `events_v1`, carry none. `sqlite3 -readonly JOURNAL <
-- schema/audit/verify_chain.sql` recomputes it with the stock shell.

ALTER TABLE journal ADD COLUMN hash TEXT
  CHECK (hash IS NULL OR (length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'));

-- The last chained row, for `journal verify`'s head and the metric.
CREATE VIEW journal_head AS
SELECT seq, hash FROM journal WHERE hash IS NOT NULL ORDER BY seq DESC LIMIT 1;
