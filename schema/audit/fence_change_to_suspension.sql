-- For each applied suspension: when the episode it ended began, and the
-- seconds from then to the applied PATCH. An episode begins with the latest
-- change of the sandbox's effective fence before the intent: a fence change
-- in its namespace, or a change of the other NetworkPolicies that widen its
-- fence (fence_bypasses, schema 9: `fence` then names them) — or, when the
-- sandbox was seen suspended and then running again (resumed by hand) after
-- that change, with the resume: a suspension after a resume is charged to
-- the resume, not to the fence change, whoever had suspended it before
-- (fencekeeper, or its user while it was held).
-- Prints aligned columns under a header line (sqlite3 prints nothing for no rows):
--   sqlite3 -readonly journal.db < schema/audit/fence_change_to_suspension.sql
.headers on
.mode column --wrap 0
WITH applied AS (
  SELECT t.seq, t.namespace, t.sandbox, t.sandbox_uid, t.reason, t.outcome_at
  FROM transitions AS t
  WHERE t.outcome = 'applied'
),
-- each observation of a sandbox, with whether it ran, and the one before it
-- (of the same uid): whether that ran, and its seq
observed AS MATERIALIZED (
  SELECT seq, uid,
         json_extract(payload, '$.sandbox.should_run') AS runs,
         lag(json_extract(payload, '$.sandbox.should_run'))
           OVER (PARTITION BY uid ORDER BY seq) AS ran_before,
         lag(seq) OVER (PARTITION BY uid ORDER BY seq) AS seq_before
  FROM events
  WHERE kind = 'sandbox_observed'
),
-- a resume: seen running after it was seen suspended, or after a suspension
-- fencekeeper applied since the observation before
resumes AS MATERIALIZED (
  SELECT o.seq, o.uid FROM observed AS o
  WHERE o.runs
    AND (NOT o.ran_before
         OR EXISTS (SELECT 1 FROM transitions AS p
                    WHERE p.sandbox_uid = o.uid AND p.outcome = 'applied'
                      AND p.outcome_seq > o.seq_before AND p.outcome_seq < o.seq))
),
-- each change of a sandbox's widening policies, on one line
bypassed AS MATERIALIZED (
  SELECT seq, recorded_at, sandbox_uid,
         group_concat(policy, ', ') AS policies,
         group_concat(policy_generation, ', ') AS generations
  FROM fence_bypasses
  GROUP BY seq, sandbox_uid
),
episodes AS MATERIALIZED (
  SELECT a.*,
         (SELECT max(f.seq) FROM fence_observations AS f
          WHERE f.namespace = a.namespace AND f.seq < a.seq) AS fence_seq,
         (SELECT max(b.seq) FROM bypassed AS b
          WHERE b.sandbox_uid = a.sandbox_uid AND b.seq < a.seq) AS bypass_seq,
         -- the latest resume before the intent
         (SELECT max(o.seq) FROM resumes AS o
          WHERE o.uid = a.sandbox_uid AND o.seq < a.seq) AS resumed_seq
  FROM applied AS a
),
began AS (
  SELECT e.*,
         CASE WHEN COALESCE(e.resumed_seq, 0) > max(COALESCE(e.fence_seq, 0),
                                                    COALESCE(e.bypass_seq, 0)) THEN 'resumed'
              WHEN COALESCE(e.bypass_seq, 0) > COALESCE(e.fence_seq, 0) THEN 'fence bypassed'
              ELSE 'fence change' END AS began_with
  FROM episodes AS e
)
SELECT e.namespace,
       e.sandbox,
       e.reason,
       CASE WHEN b.seq > COALESCE(f.seq, 0) THEN b.policies ELSE f.policy END
                                                                     AS fence,
       CASE WHEN b.seq > COALESCE(f.seq, 0) THEN b.generations ELSE f.generation END
                                                                     AS fence_generation,
       CASE WHEN b.seq > COALESCE(f.seq, 0) THEN b.recorded_at ELSE f.recorded_at END
                                                                     AS fence_seen_at,
       r.recorded_at                                                 AS resumed_at,
       e.began_with                                                  AS episode_began_with,
       e.outcome_at                                                  AS suspended_at,
       round((julianday(e.outcome_at) -
              julianday(CASE e.began_with WHEN 'resumed' THEN r.recorded_at
                                          WHEN 'fence bypassed' THEN b.recorded_at
                                          ELSE f.recorded_at END)) * 86400.0, 3)
                                                                     AS seconds
FROM began AS e
LEFT JOIN fence_observations AS f ON f.seq = e.fence_seq
LEFT JOIN bypassed AS b ON b.seq = e.bypass_seq AND b.sandbox_uid = e.sandbox_uid
LEFT JOIN events AS r ON r.seq = e.resumed_seq
WHERE f.seq IS NOT NULL OR b.seq IS NOT NULL
ORDER BY e.seq;
