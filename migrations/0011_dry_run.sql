-- fencekeeper journal, schema version 11: audit before enforce
-- (docs/design.md#audit-before-enforce).
--
-- A namespace where enforcement is off (run --enforcement dry-run,
-- --dry-run-namespace) records, once per episode, a dry-run intent: a
-- suspend_intent and, in the same commit, its outcome `dry-run`; nothing is
-- sent. Its decision's action is `record-dry-run`. An observation records
-- whether enforcement was off for its namespace (compact key `dr`, 1 when it
-- was) and the generation the latest dry-run intent was recorded at (`hd`),
-- which covers a later dry-run verdict as an applied suspend covers a PATCH,
-- and never a real one. Rows written before carry neither: enforcement was on.
--
-- Each start of `run` records its enforcement: `enforcement` ('enforce' or
-- 'dry-run': off everywhere) and `dry_run_namespaces` (a JSON array of the
-- namespaces where it was off). Starts before this version enforced.
--
-- And the start is proven: it is the first row the run appends to `journal`,
-- kind 11 (`writer_started`, body [writer, enforcement, [namespaces]]), chained
-- like every row, with writer_starts.first_seq its seq and `chained` 1.
-- `journal verify` and schema/audit/verify_chain.sql check each chained start
-- against its row, and every such row against a start. Starts recorded
-- before this version have no row (`chained` 0): the chain cannot vouch for
-- them, and none may follow a chained start.

INSERT INTO journal_kinds (kind, part, event) VALUES (11, 0, 'writer_started');

INSERT INTO journal_names (field, code, name) VALUES
  ('action', 2, 'record-dry-run'),
  ('outcome', 5, 'dry-run');

ALTER TABLE sandbox_projection ADD COLUMN dry_run_generation INTEGER;

ALTER TABLE writer_starts ADD COLUMN enforcement TEXT NOT NULL DEFAULT 'enforce' CHECK (enforcement IN ('enforce', 'dry-run'));
ALTER TABLE writer_starts ADD COLUMN dry_run_namespaces TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(dry_run_namespaces) AND json_type(dry_run_namespaces) = 'array');
ALTER TABLE writer_starts ADD COLUMN chained INTEGER NOT NULL DEFAULT 0 CHECK (chained IN (0, 1));

-- The view of every event shows the two new fields of sandbox_observed
-- (`dry_run` and `history.dry_run_generation`) and the writer_started rows.
DROP VIEW events;
CREATE VIEW events AS
SELECT seq, recorded_at, kind, namespace, name, uid, ref_seq, payload
FROM events_v1
UNION ALL
SELECT r.seq + k.part AS seq,
       r.recorded_at,
       k.event AS kind,
       r.namespace,
       r.name,
       r.uid,
       r.ref AS ref_seq,
       CASE k.event
         WHEN 'fence_observed' THEN json_object(
           'present', json(CASE WHEN json_extract(r.body, '$.p') THEN 'true' ELSE 'false' END),
           'uid', COALESCE(json_extract(r.body, '$.u'), ''),
           'generation', COALESCE(json_extract(r.body, '$.g'), 0),
           'intact', json(CASE WHEN json_extract(r.body, '$.i') THEN 'true' ELSE 'false' END),
           'policy', r.name)
         WHEN 'sandbox_observed' THEN json_object(
           'sandbox', json_object(
             'namespace', r.namespace,
             'name', r.name,
             'uid', r.uid,
             'generation', COALESCE(json_extract(r.obs, '$.g'), 0),
             'api_version', (SELECT name FROM journal_names WHERE field = 'api_version'
                             AND code = COALESCE(json_extract(r.obs, '$.v'), 0)),
             'deleting', json(CASE WHEN json_extract(r.obs, '$.x') THEN 'true' ELSE 'false' END),
             'spare', json(CASE WHEN json_extract(r.obs, '$.s') THEN 'true' ELSE 'false' END),
             'should_run', json(CASE WHEN json_extract(r.obs, '$.r') THEN 'true' ELSE 'false' END),
             'bootstrapping', json(CASE WHEN json_extract(r.obs, '$.b') THEN 'true' ELSE 'false' END),
             'bootstrap_op', (SELECT name FROM journal_names WHERE field = 'bootstrap_op'
                              AND code = COALESCE(json_extract(r.obs, '$.op'), 0)),
             'bootstrap_phase', COALESCE(json_extract(r.obs, '$.ph'), ''),
             'bootstrap_started_at_ms', json_extract(r.obs, '$.bs'),
             'fence_uid', CASE json_type(r.obs, '$.fu')
                            WHEN 'integer' THEN COALESCE(json_extract(r.obs, '$.wf.u'), '')
                            ELSE json_extract(r.obs, '$.fu') END,
             'fence_generation', json_extract(r.obs, '$.fg'),
             'workload_uid', CASE json_type(r.obs, '$.wu')
                               WHEN 'integer' THEN COALESCE(json_extract(r.obs, '$.wp.u'), '')
                               ELSE json_extract(r.obs, '$.wu') END,
             'supervisor_uid', CASE json_type(r.obs, '$.su')
                                 WHEN 'integer' THEN COALESCE(json_extract(r.obs, '$.sp.u'), '')
                                 ELSE json_extract(r.obs, '$.su') END),
           'workload_fence', json_object(
             'present', json(CASE WHEN json_extract(r.obs, '$.wf.p') THEN 'true' ELSE 'false' END),
             'uid', COALESCE(json_extract(r.obs, '$.wf.u'), ''),
             'generation', COALESCE(json_extract(r.obs, '$.wf.g'), 0),
             'intact', json(CASE WHEN json_extract(r.obs, '$.wf.i') THEN 'true' ELSE 'false' END)),
           'supervisor_fence', json_object(
             'present', json(CASE WHEN json_extract(r.obs, '$.sf.p') THEN 'true' ELSE 'false' END),
             'uid', COALESCE(json_extract(r.obs, '$.sf.u'), ''),
             'generation', COALESCE(json_extract(r.obs, '$.sf.g'), 0),
             'intact', json(CASE WHEN json_extract(r.obs, '$.sf.i') THEN 'true' ELSE 'false' END)),
           'workload_pod', json_object(
             'present', json(CASE WHEN json_extract(r.obs, '$.wp.p') THEN 'true' ELSE 'false' END),
             'uid', COALESCE(json_extract(r.obs, '$.wp.u'), ''),
             'scheduling_gated',
               json(CASE WHEN json_extract(r.obs, '$.wp.s') THEN 'true' ELSE 'false' END)),
           'supervisor_pod', json_object(
             'present', json(CASE WHEN json_extract(r.obs, '$.sp.p') THEN 'true' ELSE 'false' END),
             'uid', COALESCE(json_extract(r.obs, '$.sp.u'), ''),
             'scheduling_gated',
               json(CASE WHEN json_extract(r.obs, '$.sp.s') THEN 'true' ELSE 'false' END)),
           'history', json_object(
             'pending_intent_seq', json_extract(r.obs, '$.hp'),
             'applied_generation', json_extract(r.obs, '$.ha'),
             'dry_run_generation', json_extract(r.obs, '$.hd')),
           'bypass', CASE WHEN json_type(r.obs, '$.bp') IS NULL THEN json_array() ELSE json(
             (SELECT json_group_array(json_object(
                       'policy', json_extract(p.value, '$[0]'),
                       'uid', json_extract(p.value, '$[1]'),
                       'generation', json_extract(p.value, '$[2]'),
                       'widens', (SELECT name FROM journal_names WHERE field = 'widens'
                                  AND code = json_extract(p.value, '$[3]'))))
              FROM json_each(r.obs, '$.bp') AS p)) END,
           'observed_at_ms', r.at + COALESCE(json_extract(r.obs, '$.t'), 0),
           'dry_run', json(CASE WHEN json_extract(r.obs, '$.dr') THEN 'true' ELSE 'false' END))
         WHEN 'decided' THEN json_object(
           'verdict', (SELECT name FROM journal_names WHERE field = 'verdict'
                       AND code = json_extract(r.body, '$.d[0]')),
           'reason', (SELECT name FROM journal_names WHERE field = 'reason'
                      AND code = json_extract(r.body, '$.d[1]')),
           'action', (SELECT name FROM journal_names WHERE field = 'action'
                      AND code = json_extract(r.body, '$.d[2]')),
           'note', COALESCE(json_extract(r.body, '$.d[3]'), ''),
           'reevaluate_at_ms', json_extract(r.body, '$.d[4]'))
         WHEN 'suspend_intent' THEN json_object(
           'action', 'suspend',
           'reason', (SELECT name FROM journal_names WHERE field = 'reason'
                      AND code = COALESCE(json_extract(r.body, '$.i.r'),
                                          json_extract(r.body, '$.d[1]'), 0)),
           'observed_generation', COALESCE(json_extract(r.body, '$.i.g'),
                                           CASE WHEN r.kind = 9
                                                THEN COALESCE(json_extract(r.obs, '$.g'), 0) END,
                                           0),
           'resource_version', COALESCE(json_extract(r.body, '$.i.rv'), ''),
           'api_version', (SELECT name FROM journal_names WHERE field = 'api_version'
                           AND code = COALESCE(json_extract(r.body, '$.i.v'),
                                               CASE WHEN r.kind = 9
                                                    THEN COALESCE(json_extract(r.obs, '$.v'), 0)
                                               END, 0)),
           'note', COALESCE(json_extract(r.body, '$.i.n'),
                            CASE WHEN r.kind = 9
                                 THEN COALESCE(json_extract(r.body, '$.d[3]'), '') END, ''),
           'writer', COALESCE(json_extract(r.body, '$.i.w'), ''))
         WHEN 'suspend_outcome' THEN json_object(
           'outcome', (SELECT name FROM journal_names WHERE field = 'outcome'
                       AND code = json_extract(r.body, '$[0]')),
           'applied_generation', json_extract(r.body, '$[1]'),
           'detail', COALESCE(json_extract(r.body, '$[2]'), ''))
         WHEN 'leadership' THEN json_object(
           'identity', json_extract(r.body, '$[0]'),
           'state', json_extract(r.body, '$[1]'))
         WHEN 'forgotten' THEN json_object(
           'detail', COALESCE(json_extract(r.body, '$[0]'), ''))
         WHEN 'pruned' THEN json_object(
           'first_seq', json_extract(r.body, '$.f'),
           'last_seq', json_extract(r.body, '$.l'),
           'rows', json_extract(r.body, '$.n'),
           'first_at', strftime('%Y-%m-%dT%H:%M:%S', json_extract(r.body, '$.fa') / 1000, 'unixepoch') ||
             printf('.%03dZ', json_extract(r.body, '$.fa') % 1000),
           'last_at', strftime('%Y-%m-%dT%H:%M:%S', json_extract(r.body, '$.la') / 1000, 'unixepoch') ||
             printf('.%03dZ', json_extract(r.body, '$.la') % 1000),
           'head_seq', json_extract(r.body, '$.hs'),
           'head_hash', json_extract(r.body, '$.h'),
           'archive', COALESCE(json_extract(r.body, '$.a'), ''))
         WHEN 'writer_started' THEN json_object(
           'writer', json_extract(r.body, '$[0]'),
           'enforcement', json_extract(r.body, '$[1]'),
           'dry_run_namespaces', json(json_extract(r.body, '$[2]')))
       END AS payload
FROM journal_rows AS r
JOIN journal_kinds AS k ON k.kind = r.kind;
