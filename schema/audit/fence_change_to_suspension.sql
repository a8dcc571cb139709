-- For each applied suspension: when the episode it ended began, and the
-- seconds from then to the applied PATCH. An episode begins with the latest
-- fence change in the sandbox's namespace before the intent — or, when the
-- sandbox was suspended before and then seen running again (resumed by hand)
-- after that change, with the resume: a re-suspension is charged to the
-- resume, not to the original fence change.
-- Prints aligned columns under a header line (sqlite3 prints nothing for no rows):
--   sqlite3 -readonly journal.db < schema/audit/fence_change_to_suspension.sql
.headers on
.mode column --wrap 0
WITH applied AS (
  SELECT t.seq, t.namespace, t.sandbox, t.sandbox_uid, t.reason, t.outcome_at,
         -- the same sandbox's previous applied suspension, if any
         (SELECT max(p.outcome_seq) FROM transitions AS p
          WHERE p.sandbox_uid = t.sandbox_uid AND p.outcome = 'applied'
            AND p.outcome_seq < t.seq) AS previous_seq
  FROM transitions AS t
  WHERE t.outcome = 'applied'
),
episodes AS (
  SELECT a.*,
         (SELECT max(f.seq) FROM fence_observations AS f
          WHERE f.namespace = a.namespace AND f.seq < a.seq) AS fence_seq,
         -- the first observation of it running after that suspension: the resume
         (SELECT min(o.seq) FROM events AS o
          WHERE o.kind = 'sandbox_observed' AND o.uid = a.sandbox_uid
            AND o.seq > a.previous_seq AND o.seq < a.seq
            AND json_extract(o.payload, '$.sandbox.should_run')) AS resumed_seq
  FROM applied AS a
)
SELECT e.namespace,
       e.sandbox,
       e.reason,
       f.policy                                                      AS fence,
       f.generation                                                  AS fence_generation,
       f.recorded_at                                                 AS fence_seen_at,
       r.recorded_at                                                 AS resumed_at,
       CASE WHEN r.seq > COALESCE(f.seq, 0) THEN 'resumed' ELSE 'fence change' END
                                                                     AS episode_began_with,
       e.outcome_at                                                  AS suspended_at,
       round((julianday(e.outcome_at) -
              julianday(CASE WHEN r.seq > COALESCE(f.seq, 0) THEN r.recorded_at
                             ELSE f.recorded_at END)) * 86400.0, 3)  AS seconds
FROM episodes AS e
JOIN fence_observations AS f ON f.seq = e.fence_seq
LEFT JOIN events AS r ON r.seq = e.resumed_seq
ORDER BY e.seq;
