-- Transitions (suspend intents with their latest outcome) recorded in a time window.
-- Parameters, both optional (unset: no bound): @from (inclusive) and @to
-- (exclusive), RFC 3339 times with a date, a time and Z or an offset; an
-- offset is normalized to UTC (2026-12-07T03:31:00+01:00 is 02:31:00Z). A
-- value that is not such a time stops the query with an error (exit code 1).
-- Prints aligned columns under a header line (sqlite3 prints nothing for no rows):
--   sqlite3 -readonly journal.db -cmd ".parameter set @from 2026-12-07T03:31:00+01:00" \
--     -cmd ".parameter set @to 2026-12-07T03:32:00+01:00" < schema/audit/transitions_in_window.sql
.bail on
.headers on
.mode column --wrap 0
-- The guard (temp objects only: -readonly allows them, the journal is not
-- touched). A bare date is no time: the shell reads 2026-12-07 as 2007.
CREATE TEMP TABLE IF NOT EXISTS transitions_in_window_bounds (value);
CREATE TEMP TRIGGER IF NOT EXISTS transitions_in_window_needs_times
BEFORE INSERT ON transitions_in_window_bounds
WHEN NEW.value IS NOT NULL AND NOT (
  typeof(NEW.value) = 'text'
  AND NEW.value GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]*'
  AND (NEW.value GLOB '*[Zz]' OR NEW.value GLOB '*[+-][0-9][0-9]:[0-9][0-9]')
  AND julianday(NEW.value) IS NOT NULL)
BEGIN
  SELECT RAISE(ABORT, 'transitions_in_window.sql: @from and @to must be RFC 3339 times with Z or an offset, e.g. 2026-12-07T03:31:00+01:00 or 2026-12-07T02:31:00Z');
END;
INSERT INTO transitions_in_window_bounds VALUES (@from), (@to);
SELECT seq, recorded_at, namespace, sandbox, reason, outcome, detail
FROM transitions
-- recorded_at is UTC with milliseconds; the bounds are made the same text.
WHERE recorded_at >= COALESCE(strftime('%Y-%m-%dT%H:%M:%fZ', @from), '')
  AND recorded_at < COALESCE(strftime('%Y-%m-%dT%H:%M:%fZ', @to), '9999')
ORDER BY seq;
