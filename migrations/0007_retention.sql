-- fencekeeper journal, schema version 7: retention and archive (issue 18).
--
-- `run --journal-retention` removes the oldest events, online, in small
-- steps; each step appends a `pruned` row (kind 10) saying what went and the
-- chain head at the cut, and folds what went into `journal_base`, so that the
-- state the retained events fold to, started from the base, is still the
-- state of the projections (docs/retention.md). An archive file written by
-- `run --journal-archive` is a database of this same schema holding one
-- pruned range; `archive_range` says which.

INSERT INTO journal_kinds (kind, part, event) VALUES (10, 0, 'pruned');

-- The latest pruned row, found without a scan (the delete triggers read it).
CREATE INDEX journal_pruned ON journal (seq) WHERE kind = 10;

-- In an archive file, the range it holds (one row; none in a journal).
CREATE TABLE archive_range (
  first_seq   INTEGER NOT NULL,   -- the first event the file holds
  last_seq    INTEGER NOT NULL,   -- the last event the file holds
  rows        INTEGER NOT NULL,   -- rows of `journal` and `events_v1` it holds
  anchor_seq  INTEGER NOT NULL,   -- the row before its first one (0: none)
  anchor_hash TEXT    NOT NULL,   -- that row's hash ('' when it carries none)
  head_seq    INTEGER NOT NULL,   -- its last chained row (0: none)
  head_hash   TEXT    NOT NULL,
  source      TEXT    NOT NULL,   -- the journal it was pruned from
  written_at  TEXT    NOT NULL    -- RFC 3339 UTC
) STRICT;

-- The last seq before the rows this file holds, and the hash the first of
-- them is chained to: from the latest `pruned` row of a journal, from
-- `archive_range` in an archive file; (0, '') when nothing was removed.
CREATE VIEW journal_cut AS
SELECT COALESCE((SELECT anchor_seq FROM archive_range),
                (SELECT json_extract(body, '$.l') FROM journal WHERE kind = 10
                 ORDER BY seq DESC LIMIT 1), 0) AS last_pruned,
       COALESCE((SELECT anchor_hash FROM archive_range),
                (SELECT json_extract(body, '$.h') FROM journal WHERE kind = 10
                 ORDER BY seq DESC LIMIT 1), '') AS anchor_hash;

-- What the removed events fold to, record by record (src/journal/base_state.h):
-- 'fence:NS/POLICY', 'sandbox:UID' and 'intent:SEQ' (an intent still pending
-- at the cut). Not append-only: it is rewritten as the cut moves, like the
-- projections, which it reproduces with the retained events.
CREATE TABLE journal_base (
  key    TEXT NOT NULL PRIMARY KEY,
  record TEXT NOT NULL CHECK (json_valid(record))
) STRICT, WITHOUT ROWID;

-- A row may be deleted only once a chained `pruned` row covers it.
DROP TRIGGER journal_append_only_delete;
CREATE TRIGGER journal_append_only_delete BEFORE DELETE ON journal
WHEN OLD.seq > (SELECT COALESCE(max(json_extract(body, '$.l')), 0) FROM
                (SELECT body FROM journal WHERE kind = 10 ORDER BY seq DESC LIMIT 1))
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: DELETE is allowed only of rows a pruned record covers');
END;

DROP TRIGGER events_append_only_delete;
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON "events_v1"
WHEN OLD.seq > (SELECT COALESCE(max(json_extract(body, '$.l')), 0) FROM
                (SELECT body FROM journal WHERE kind = 10 ORDER BY seq DESC LIMIT 1))
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: DELETE is allowed only of rows a pruned record covers');
END;

-- A subject goes only when nothing names it any more.
DROP TRIGGER subjects_append_only_delete;
CREATE TRIGGER subjects_append_only_delete BEFORE DELETE ON subjects
WHEN EXISTS (SELECT 1 FROM journal WHERE subject = OLD.id)
  OR EXISTS (SELECT 1 FROM sandbox_projection WHERE subject = OLD.id)
  OR EXISTS (SELECT 1 FROM fence_projection WHERE subject = OLD.id)
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal subjects are append-only: DELETE is allowed only of a subject nothing names');
END;

-- The view of every event learns the `pruned` kind.
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
             'applied_generation', json_extract(r.obs, '$.ha')),
           'observed_at_ms', r.at + COALESCE(json_extract(r.obs, '$.t'), 0))
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
       END AS payload
FROM journal_rows AS r
JOIN journal_kinds AS k ON k.kind = r.kind;
