-- Transitions (suspend intents with their latest outcome) recorded in a time window.
-- Parameters, both optional (unset: no bound): @from and @to, RFC 3339 UTC.
-- Prints aligned columns under a header line (sqlite3 prints nothing for no rows):
--   sqlite3 -readonly journal.db -cmd ".parameter set @from 2026-11-29T00:00:00Z" \
--     -cmd ".parameter set @to 2026-11-30T00:00:00Z" < schema/audit/transitions_in_window.sql
.headers on
.mode column --wrap 0
SELECT seq, recorded_at, namespace, sandbox, reason, outcome, detail
FROM transitions
WHERE recorded_at >= COALESCE(@from, '') AND recorded_at < COALESCE(@to, '9999')
ORDER BY seq;
