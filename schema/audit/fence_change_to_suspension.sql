-- For each applied suspension: the latest fence change in its namespace before
-- the intent, and the seconds from seeing that change to the applied PATCH.
--   sqlite3 -readonly journal.db < schema/audit/fence_change_to_suspension.sql
SELECT t.namespace,
       t.sandbox,
       t.reason,
       f.policy                                                             AS fence,
       f.generation                                                         AS fence_generation,
       f.recorded_at                                                        AS fence_seen_at,
       t.outcome_at                                                         AS suspended_at,
       round((julianday(t.outcome_at) - julianday(f.recorded_at)) * 86400.0, 3) AS seconds
FROM transitions AS t
JOIN fence_observations AS f
  ON f.seq = (SELECT max(f2.seq) FROM fence_observations AS f2
              WHERE f2.namespace = t.namespace AND f2.seq < t.seq)
WHERE t.outcome = 'applied'
ORDER BY t.seq;
