-- Recomputes the journal's hash chain with the stock sqlite3 shell (its
-- built-in sha3()), without fencekeeper:
--
--   sqlite3 -readonly JOURNAL < schema/audit/verify_chain.sql
--
-- Prints the chained rows whose hash does not match, as "seq|expected|stored"
-- (none for an intact journal), and as its last line the number of them: 0
-- when every row from the first chained one on carries the SHA3-256 of the
-- previous row's hash and its own canonical form (docs/journal-chain.md).
-- A row edited, deleted, inserted or moved, or a subject edited, makes at
-- least one row mismatch. A truncated tail does not: compare the last row
-- with a head kept off the volume (`fencekeeper journal verify --expect-head`).
.headers off
.mode list
-- A row's hash is stored as its 32 bytes (schema 10; 64 hex digits in the
-- TEXT of an older file) and spelled as 64 lowercase hex digits, in the
-- canonical form of the next row as here.
CREATE TEMP VIEW chain_check AS
WITH chained AS (
  SELECT j.seq,
         CASE typeof(j.hash) WHEN 'blob' THEN lower(hex(j.hash)) ELSE j.hash END AS stored,
         lag(CASE typeof(j.hash) WHEN 'blob' THEN lower(hex(j.hash)) ELSE j.hash END)
           OVER (ORDER BY j.seq) AS before,
         '|' || j.seq || '|' || j.at || '|' || j.kind || '|' || COALESCE(j.ref, '') || '|' ||
         length(CAST(s.namespace AS BLOB)) || ':' || s.namespace ||
         length(CAST(s.name AS BLOB)) || ':' || s.name ||
         length(CAST(s.uid AS BLOB)) || ':' || s.uid ||
         length(CAST(COALESCE(s.base, '') AS BLOB)) || ':' || COALESCE(s.base, '') ||
         length(CAST(j.body AS BLOB)) || ':' || j.body AS canonical
  FROM journal AS j LEFT JOIN subjects AS s ON s.id = j.subject
  WHERE j.seq >= (SELECT min(seq) FROM journal WHERE hash IS NOT NULL)
)
SELECT seq, stored,
       lower(hex(sha3(COALESCE(before, (SELECT NULLIF(anchor_hash, '') FROM journal_cut),
                               printf('%.64c', '0')) || canonical, 256))) AS expected
FROM chained;
SELECT seq || '|' || COALESCE(expected, '(no subject)') || '|' || COALESCE(stored, '(no hash)')
FROM chain_check WHERE stored IS NOT expected ORDER BY seq;
SELECT count(*) FROM chain_check WHERE stored IS NOT expected;
