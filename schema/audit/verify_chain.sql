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
--
-- Then the run starts (schema 11 on): each chained start of table
-- writer_starts against its `writer_started` row (kind 11, chained above), as
-- "seq|writer start N (WRITER): why", and every such row without its start.
-- The last line counts both kinds of lines.
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
-- The starts, with the query `journal verify` runs (src/journal/verify.cc).
-- A file of schema 8-10 has no chained start; one before schema 8 (an archive
-- file written then) has no table writer_starts: the shell reports "no such
-- table" for this part (and exits 1), and the count below covers the chain
-- alone: an error here on a journal that has writer_started rows means the
-- table was dropped, and the starts are unchecked.
CREATE TEMP TABLE start_check (seq INTEGER, why TEXT);
INSERT INTO temp.start_check
WITH recorded AS (
  -- A file before schema 11 has neither the enforcement nor `chained`: the
  -- natural join's constants stand in for the columns it lacks.
  SELECT start, first_seq, writer, started_at, enforcement, dry_run_namespaces, chained
  FROM main.writer_starts NATURAL LEFT JOIN
       (SELECT 'enforce' AS enforcement, '[]' AS dry_run_namespaces, 0 AS chained)),
starts AS (
  SELECT w.start, w.first_seq, w.writer, w.started_at, w.enforcement, w.dry_run_namespaces,
         w.chained, j.kind, j.body, j.at,
         -- In the order rows are attributed in (first_seq, then start).
         COALESCE(max(w.chained) OVER (ORDER BY w.first_seq, w.start ROWS BETWEEN UNBOUNDED
                                       PRECEDING AND 1 PRECEDING), 0) AS follows_chained,
         count(*) FILTER (WHERE w.chained = 1) OVER (PARTITION BY w.first_seq) AS claims
  FROM recorded AS w LEFT JOIN journal AS j ON j.seq = w.first_seq),
judged AS (
  SELECT first_seq, start, writer, CASE
    WHEN chained = 0 THEN CASE WHEN follows_chained THEN 'not chained, but recorded after a chained start' END
    WHEN claims > 1 THEN 'another chained start claims the same row'
    WHEN first_seq <= (SELECT last_pruned FROM journal_cut) THEN NULL
    WHEN kind IS NULL THEN 'its chained row is missing'
    WHEN kind <> 11 THEN 'the row at its seq is not a writer start'
    WHEN json_extract(body, '$[0]') IS NOT writer
      THEN 'its row names writer ' || json_extract(body, '$[0]')
    WHEN json_extract(body, '$[1]') IS NOT enforcement
         OR json(json_extract(body, '$[2]')) IS NOT json(dry_run_namespaces)
      THEN 'it says ' || enforcement || ' ' || dry_run_namespaces || ', its row ' ||
           json_extract(body, '$[1]') || ' ' || json_extract(body, '$[2]')
    WHEN strftime('%Y-%m-%dT%H:%M:%S', at / 1000, 'unixepoch') || printf('.%03dZ', at % 1000)
         IS NOT started_at
      THEN 'it says it started at ' || started_at || ', its row was recorded at ' ||
           strftime('%Y-%m-%dT%H:%M:%S', at / 1000, 'unixepoch') || printf('.%03dZ', at % 1000)
  END AS why
  FROM starts)
SELECT first_seq, 'writer start ' || start || ' (' || writer || '): ' || why FROM judged
WHERE why IS NOT NULL
UNION ALL
SELECT j.seq, 'a writer_started row that no chained writer start claims' FROM journal AS j
WHERE j.kind = 11 AND NOT EXISTS (SELECT 1 FROM recorded AS w
                                  WHERE w.first_seq = j.seq AND w.chained = 1)
ORDER BY 1;
SELECT seq || '|' || COALESCE(expected, '(no subject)') || '|' || COALESCE(stored, '(no hash)')
FROM chain_check WHERE stored IS NOT expected ORDER BY seq;
SELECT seq || '|' || why FROM temp.start_check ORDER BY seq;
SELECT (SELECT count(*) FROM chain_check WHERE stored IS NOT expected) +
       (SELECT count(*) FROM temp.start_check);
