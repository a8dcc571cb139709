-- Suspend intents with no recorded outcome: the process stopped between the
-- durable intent and the outcome. The next start resolves each by reading the
-- sandbox again, so on a running instance this list is empty.
-- Prints aligned columns under a header line (sqlite3 prints nothing for no rows):
--   sqlite3 -readonly journal.db < schema/audit/intents_without_outcome.sql
.headers on
.mode column --wrap 0
SELECT seq, recorded_at, namespace, sandbox, sandbox_uid, reason, observed_generation, detail
FROM transitions
WHERE outcome = 'pending'
ORDER BY seq;
