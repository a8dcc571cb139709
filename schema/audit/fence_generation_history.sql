-- Every observed change of the namespace fences (UID, generation, intactness, presence), per namespace.
-- Prints aligned columns under a header line (sqlite3 prints nothing for no rows):
--   sqlite3 -readonly journal.db < schema/audit/fence_generation_history.sql
.headers on
.mode column --wrap 0
SELECT namespace, policy, seq, recorded_at, policy_uid, generation, intact
FROM fence_observations
ORDER BY namespace, policy, seq;
