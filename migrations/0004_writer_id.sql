-- fencekeeper journal, schema version 4: the writer id.
--
-- A seq is unique only inside one journal, and a sandbox keeps its
-- annotations for good, so a replaced journal (a lost volume, an older backup
-- restored, the other replica's journal) may number a new intent with a seq
-- that an object already carries from another journal. Every intent therefore
-- records the writer id of the `run` process that issued it (payload field
-- `writer`, sent as annotation openshell.ai/fail-closed-journal-writer), and
-- an object carries an intent only if seq and writer both match. Events are
-- append-only, so intents journaled before this version keep no writer: the
-- view shows '' for them (their PATCHes carried no writer annotation).

DROP VIEW transitions;

CREATE VIEW transitions AS
SELECT i.seq                                                   AS seq,
       i.recorded_at                                           AS recorded_at,
       i.namespace                                             AS namespace,
       i.name                                                  AS sandbox,
       i.uid                                                   AS sandbox_uid,
       json_extract(i.payload, '$.action')                     AS action,
       json_extract(i.payload, '$.reason')                     AS reason,
       COALESCE(json_extract(o.payload, '$.outcome'), 'pending') AS outcome,
       COALESCE(NULLIF(json_extract(o.payload, '$.detail'), ''),
                json_extract(i.payload, '$.note'))              AS detail,
       json_extract(i.payload, '$.observed_generation')        AS observed_generation,
       json_extract(o.payload, '$.applied_generation')         AS applied_generation,
       o.seq                                                   AS outcome_seq,
       o.recorded_at                                           AS outcome_at,
       COALESCE(json_extract(i.payload, '$.writer'), '')       AS writer
FROM events AS i
LEFT JOIN events AS o
  ON o.seq = (SELECT max(x.seq) FROM events AS x
              WHERE x.ref_seq = i.seq AND x.kind = 'suspend_outcome')
WHERE i.kind = 'suspend_intent';
