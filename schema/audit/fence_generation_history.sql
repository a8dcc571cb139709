-- Every observed change of the namespace fences (UID, generation, intactness, presence), per namespace.
--   sqlite3 -readonly journal.db < schema/audit/fence_generation_history.sql
SELECT namespace, policy, seq, recorded_at, policy_uid, generation, intact
FROM fence_observations
ORDER BY namespace, policy, seq;
