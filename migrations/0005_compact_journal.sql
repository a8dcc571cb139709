-- fencekeeper journal, schema version 5: the compact journal (issue 18).
--
-- A sandbox's whole life must cost at most 1.5 KiB of journal; in schema 4
-- it cost 5.8 KB. From this version on, events are appended to `journal`,
-- whose rows are compact (docs/design.md#the-compact-journal):
--   * one row per evaluation: the observation, the decision over it and, if
--     the decision is to PATCH, the intent (kinds 8 and 9) — 2 or 3 events
--     with consecutive seqs, the row's seq being the first;
--   * the subject (namespace, name, uid) spelled once, in `subjects`, with
--     the sandbox's first observation (`base`); an observation row holds the
--     JSON merge patch that turns the base into it (json_patch(base, o));
--   * enums as integers (journal_names), times as integer milliseconds,
--     fields at their default value left out, an admission uid equal to the
--     observed one written as 1, indexes over integers only.
-- Events are append-only: the rows of schema 1-4 stay as they were, in
-- `events_v1`. The view `events` shows both as the events of schema 4 (same
-- columns, same payload JSON), and every audit view reads it.

DROP VIEW transitions;
DROP VIEW fence_observations;
DROP VIEW sandbox_state;
DROP VIEW decisions;
DROP VIEW leadership;
DROP VIEW forgotten_sandboxes;

ALTER TABLE events RENAME TO events_v1;

CREATE TABLE subjects (
  id        INTEGER PRIMARY KEY,
  namespace TEXT    NOT NULL,
  name      TEXT    NOT NULL,               -- sandbox, policy or lease name
  uid       TEXT    NOT NULL,               -- sandbox uid ('' for a policy or a lease)
  base      TEXT    CHECK (base IS NULL OR json_valid(base))  -- a sandbox's first observation, compact
) STRICT;

CREATE TABLE journal (
  seq     INTEGER PRIMARY KEY,              -- the seq of the row's first event
  at      INTEGER NOT NULL,                 -- recorded_at: ms since the epoch, UTC
  kind    INTEGER NOT NULL,                 -- journal_kinds.kind
  subject INTEGER NOT NULL REFERENCES subjects (id),
  ref     INTEGER,                          -- suspend_outcome: the seq of its intent
  body    TEXT    NOT NULL CHECK (json_valid(body))
) STRICT;

CREATE INDEX journal_by_subject ON journal (subject, seq);
CREATE INDEX journal_by_ref ON journal (ref) WHERE ref IS NOT NULL;

CREATE TRIGGER journal_append_only_update BEFORE UPDATE ON journal
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: UPDATE is not allowed');
END;

CREATE TRIGGER journal_append_only_delete BEFORE DELETE ON journal
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: DELETE is not allowed');
END;

CREATE TRIGGER subjects_append_only_update BEFORE UPDATE ON subjects
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal subjects are append-only: UPDATE is not allowed');
END;

CREATE TRIGGER subjects_append_only_delete BEFORE DELETE ON subjects
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal subjects are append-only: DELETE is not allowed');
END;

-- The events a row of each kind holds, in seq order from the row's seq.
CREATE TABLE journal_kinds (
  kind   INTEGER NOT NULL,
  part   INTEGER NOT NULL,                  -- seq = journal.seq + part
  event  TEXT    NOT NULL,                  -- the event kind of schema 4
  PRIMARY KEY (kind, part)
) STRICT, WITHOUT ROWID;

INSERT INTO journal_kinds (kind, part, event) VALUES
  (1, 0, 'fence_observed'), (2, 0, 'sandbox_observed'), (3, 0, 'decided'),
  (4, 0, 'suspend_intent'), (5, 0, 'suspend_outcome'), (6, 0, 'leadership'),
  (7, 0, 'forgotten'), (8, 0, 'sandbox_observed'), (8, 1, 'decided'),
  (9, 0, 'sandbox_observed'), (9, 1, 'decided'), (9, 2, 'suspend_intent');

-- The text of every integer code in a body.
CREATE TABLE journal_names (
  field TEXT    NOT NULL,
  code  INTEGER NOT NULL,
  name  TEXT    NOT NULL,
  PRIMARY KEY (field, code)
) STRICT, WITHOUT ROWID;

INSERT INTO journal_names (field, code, name) VALUES
  ('api_version', 0, 'v1beta1'), ('api_version', 1, 'v1alpha1'),
  ('bootstrap_op', 0, ''), ('bootstrap_op', 1, 'create'), ('bootstrap_op', 2, 'restart'),
  ('bootstrap_op', 3, 'stop'), ('bootstrap_op', 4, 'other'),
  ('verdict', 0, 'ignore'), ('verdict', 1, 'suspend'), ('verdict', 2, 'hold'),
  ('verdict', 3, 'healthy'), ('verdict', 4, 'admitting'),
  ('reason', 0, ''), ('reason', 1, 'fence-missing'), ('reason', 2, 'fence-altered'),
  ('reason', 3, 'fence-stale'), ('reason', 4, 'workload-generation-changed'),
  ('reason', 5, 'supervisor-generation-changed'),
  ('action', 0, 'none'), ('action', 1, 'patch-suspend'),
  ('outcome', 0, 'pending'), ('outcome', 1, 'applied'), ('outcome', 2, 'conflict'),
  ('outcome', 3, 'failed'), ('outcome', 4, 'superseded');

-- The projections lose their foreign keys (a seq may now be the second or
-- third event of a row) and remember each record's subject.
CREATE TABLE fence_projection_v5 (
  namespace  TEXT    NOT NULL,
  policy     TEXT    NOT NULL,
  present    INTEGER NOT NULL CHECK (present IN (0, 1)),
  policy_uid TEXT    NOT NULL,
  generation INTEGER NOT NULL,
  intact     INTEGER NOT NULL CHECK (intact IN (0, 1)),
  seq        INTEGER NOT NULL,
  updated_at TEXT    NOT NULL,
  subject    INTEGER REFERENCES subjects (id),
  PRIMARY KEY (namespace, policy)
) STRICT, WITHOUT ROWID;

INSERT INTO fence_projection_v5
  (namespace, policy, present, policy_uid, generation, intact, seq, updated_at)
SELECT namespace, policy, present, policy_uid, generation, intact, seq, updated_at
FROM fence_projection;

DROP TABLE fence_projection;
ALTER TABLE fence_projection_v5 RENAME TO fence_projection;

CREATE TABLE sandbox_projection_v5 (
  sandbox_uid         TEXT    PRIMARY KEY,
  namespace           TEXT    NOT NULL,
  name                TEXT    NOT NULL,
  verdict             TEXT,
  reason              TEXT,
  action              TEXT,
  observed_generation INTEGER,
  observation         TEXT    CHECK (observation IS NULL OR json_valid(observation)),
  observation_seq     INTEGER,
  decision            TEXT    CHECK (decision IS NULL OR json_valid(decision)),
  decision_seq        INTEGER,
  pending_intent_seq  INTEGER,
  applied_generation  INTEGER,
  updated_at          TEXT    NOT NULL,
  refused_intent_seq  INTEGER,
  subject             INTEGER REFERENCES subjects (id)
) STRICT;

INSERT INTO sandbox_projection_v5
  (sandbox_uid, namespace, name, verdict, reason, action, observed_generation, observation,
   observation_seq, decision, decision_seq, pending_intent_seq, applied_generation, updated_at,
   refused_intent_seq)
SELECT sandbox_uid, namespace, name, verdict, reason, action, observed_generation, observation,
       observation_seq, decision, decision_seq, pending_intent_seq, applied_generation, updated_at,
       refused_intent_seq
FROM sandbox_projection;

DROP TABLE sandbox_projection;
ALTER TABLE sandbox_projection_v5 RENAME TO sandbox_projection;
CREATE INDEX sandbox_projection_by_name ON sandbox_projection (namespace, name);

-- Every row of `journal` with its subject, its time as RFC 3339 text and,
-- for a row holding an observation, that observation in compact form.
CREATE VIEW journal_rows AS
SELECT j.seq                                                            AS seq,
       j.at                                                             AS at,
       strftime('%Y-%m-%dT%H:%M:%S', j.at / 1000, 'unixepoch') ||
         printf('.%03dZ', j.at % 1000)                                  AS recorded_at,
       j.kind                                                           AS kind,
       s.namespace                                                      AS namespace,
       s.name                                                           AS name,
       s.uid                                                            AS uid,
       j.ref                                                            AS ref,
       j.body                                                           AS body,
       CASE WHEN j.kind IN (2, 8, 9)
            THEN json_patch(COALESCE(s.base, '{}'), json_extract(j.body, '$.o')) END AS obs
FROM journal AS j
JOIN subjects AS s ON s.id = j.subject;

-- Every event, of every schema version, as schema 4 stored it: one row per
-- event, `payload` the readable JSON of docs/design.md#tables-and-views.
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
       END AS payload
FROM journal_rows AS r
JOIN journal_kinds AS k ON k.kind = r.kind;

-- Contract: one row per suspend intent with its latest outcome.
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
LEFT JOIN (SELECT ref_seq, max(seq) AS seq, recorded_at, payload  -- the latest outcome
           FROM events WHERE kind = 'suspend_outcome' GROUP BY ref_seq) AS o
  ON o.ref_seq = i.seq
WHERE i.kind = 'suspend_intent';

-- Contract: one row per observed change of either namespace policy.
CREATE VIEW fence_observations AS
SELECT seq,
       recorded_at,
       namespace,
       json_extract(payload, '$.policy')                               AS policy,
       NULLIF(json_extract(payload, '$.uid'), '')                      AS policy_uid,
       CASE WHEN json_extract(payload, '$.present')
            THEN json_extract(payload, '$.generation') END             AS generation,
       json_extract(payload, '$.intact')                               AS intact,
       json_extract(payload, '$.present')                              AS present
FROM events
WHERE kind = 'fence_observed';

-- Contract: the current state of every sandbox fencekeeper has seen.
CREATE VIEW sandbox_state AS
SELECT namespace,
       name                AS sandbox,
       sandbox_uid,
       verdict,
       updated_at,
       reason,
       action,
       observed_generation,
       pending_intent_seq,
       applied_generation,
       decision_seq
FROM sandbox_projection;

-- Every recorded decision, with the observation it was made on.
CREATE VIEW decisions AS
SELECT seq,
       recorded_at,
       namespace,
       name                                AS sandbox,
       uid                                 AS sandbox_uid,
       json_extract(payload, '$.verdict')  AS verdict,
       json_extract(payload, '$.reason')   AS reason,
       json_extract(payload, '$.action')   AS action,
       json_extract(payload, '$.note')     AS note
FROM events
WHERE kind = 'decided';

CREATE VIEW leadership AS
SELECT seq,
       recorded_at,
       namespace                             AS lease_namespace,
       name                                  AS lease,
       json_extract(payload, '$.identity')   AS identity,
       json_extract(payload, '$.state')      AS state
FROM events
WHERE kind = 'leadership';

-- Sandboxes that left the cluster, newest last.
CREATE VIEW forgotten_sandboxes AS
SELECT seq,
       recorded_at,
       namespace,
       name                                AS sandbox,
       uid                                 AS sandbox_uid,
       json_extract(payload, '$.detail')   AS detail
FROM events
WHERE kind = 'forgotten';
