-- fencekeeper journal: the full current schema (version 11).
-- Kept equal to the result of applying migrations/ in order; a test checks it
-- (the statements below are the ones SQLite keeps after those migrations).
-- `journal` is the journal proper since version 5 (migrations/0005_compact_journal.sql):
-- append-only (enforced by the triggers below), one compact row per evaluation
-- or other event, with a monotonic `seq`; `subjects` spells each sandbox,
-- policy and lease once; `events_v1` keeps the rows of versions 1-4; the view
-- `events` shows both as the events of version 4. The *_projection tables are
-- derived in the same transaction as each append, so a restart reads
-- O(sandboxes) rows, not the whole journal. The views `transitions`,
-- `fence_observations`, `sandbox_state` and `fence_bypasses` (schema 9) are a
-- contract with audit scripts (docs/design.md#tables-and-views): change them
-- only compatibly.

CREATE TABLE schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at TEXT    NOT NULL
) STRICT;

-- events_v1: the rows written before schema 5, kept as schema 1 created them
-- (its kind comment is that of schema 1 and SQLite keeps it verbatim). The
-- kinds are eight today (src/domain/event.h): fence_observed,
-- sandbox_observed, decided, suspend_intent, suspend_outcome, leadership,
-- forgotten, pruned; the `events` view names each.
CREATE TABLE "events_v1" (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, even after a rollback
  recorded_at TEXT    NOT NULL,                   -- RFC 3339 UTC
  kind        TEXT    NOT NULL,                   -- fence_observed | sandbox_observed | decided | suspend_intent | suspend_outcome
  namespace   TEXT    NOT NULL,
  name        TEXT    NOT NULL,                   -- sandbox name, or policy name for fence_observed
  uid         TEXT    NOT NULL,                   -- sandbox uid ('' for fence_observed)
  ref_seq     INTEGER REFERENCES "events_v1" (seq),    -- suspend_outcome: the intent it resolves
  payload     TEXT    NOT NULL CHECK (json_valid(payload))
) STRICT;

CREATE INDEX events_by_subject ON "events_v1" (uid, seq);

CREATE INDEX events_by_kind ON "events_v1" (kind, seq);

CREATE INDEX events_by_ref ON "events_v1" (ref_seq) WHERE ref_seq IS NOT NULL;

CREATE TRIGGER events_append_only_update BEFORE UPDATE ON "events_v1"
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: UPDATE is not allowed');
END;

CREATE TRIGGER events_append_only_delete BEFORE DELETE ON "events_v1"
WHEN OLD.seq > (SELECT COALESCE(max(json_extract(body, '$.l')), 0) FROM
                (SELECT body FROM journal WHERE kind = 10 ORDER BY seq DESC LIMIT 1))
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: DELETE is allowed only of rows a pruned record covers');
END;

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
  body    TEXT    NOT NULL CHECK (json_valid(body)),
  hash    BLOB    CHECK (hash IS NULL OR length(hash) = 32)  -- SHA3-256, NULL before schema 6
) STRICT;
-- `hash` (schema 6; its 32 bytes since schema 10, 64 hex digits before):
-- SHA3-256 of the previous row's hash, as 64 lowercase hex digits, and this
-- row's canonical form (src/journal/chain.h, docs/journal-chain.md); NULL on
-- the rows appended before the upgrade to schema 6.

CREATE INDEX journal_by_subject ON journal (subject, seq);

CREATE INDEX journal_by_ref ON journal (ref) WHERE ref IS NOT NULL;

CREATE TRIGGER journal_append_only_update BEFORE UPDATE ON journal
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: UPDATE is not allowed');
END;

CREATE TRIGGER journal_append_only_delete BEFORE DELETE ON journal
WHEN OLD.seq > (SELECT COALESCE(max(json_extract(body, '$.l')), 0) FROM
                (SELECT body FROM journal WHERE kind = 10 ORDER BY seq DESC LIMIT 1))
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: DELETE is allowed only of rows a pruned record covers');
END;

CREATE TRIGGER subjects_append_only_update BEFORE UPDATE ON subjects
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal subjects are append-only: UPDATE is not allowed');
END;

CREATE TRIGGER subjects_append_only_delete BEFORE DELETE ON subjects
WHEN EXISTS (SELECT 1 FROM journal WHERE subject = OLD.id)
  OR EXISTS (SELECT 1 FROM sandbox_projection WHERE subject = OLD.id)
  OR EXISTS (SELECT 1 FROM fence_projection WHERE subject = OLD.id)
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal subjects are append-only: DELETE is allowed only of a subject nothing names');
END;

CREATE TABLE journal_kinds (
  kind   INTEGER NOT NULL,
  part   INTEGER NOT NULL,                  -- seq = journal.seq + part
  event  TEXT    NOT NULL,                  -- the event kind of schema 4
  PRIMARY KEY (kind, part)
) STRICT, WITHOUT ROWID;

CREATE TABLE journal_names (
  field TEXT    NOT NULL,
  code  INTEGER NOT NULL,
  name  TEXT    NOT NULL,
  PRIMARY KEY (field, code)
) STRICT, WITHOUT ROWID;

CREATE TABLE "fence_projection" (
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

CREATE TABLE "sandbox_projection" (
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
, dry_run_generation INTEGER) STRICT;

CREATE INDEX sandbox_projection_by_name ON sandbox_projection (namespace, name);

-- The last chained row (schema 6), its hash as 64 lowercase hex digits.
CREATE VIEW journal_head AS
SELECT seq, lower(hex(hash)) AS hash FROM journal WHERE hash IS NOT NULL ORDER BY seq DESC LIMIT 1;

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

-- Each start of `run` (migrations/0008_writer_starts.sql): a row's writer is
-- the writer of the latest start whose first_seq <= its seq (ties: the
-- greater `start`). Append-only; retention keeps every row.
CREATE TABLE writer_starts (
  start      INTEGER PRIMARY KEY,   -- the starts in order
  first_seq  INTEGER NOT NULL,      -- the first seq this writer may append
  writer     TEXT    NOT NULL,      -- the writer id (docs/transitions.md#the-writer-id)
  started_at TEXT    NOT NULL       -- RFC 3339 UTC
, enforcement TEXT NOT NULL DEFAULT 'enforce' CHECK (enforcement IN ('enforce', 'dry-run')), dry_run_namespaces TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(dry_run_namespaces) AND json_type(dry_run_namespaces) = 'array'), chained INTEGER NOT NULL DEFAULT 0 CHECK (chained IN (0, 1))) STRICT;
-- `enforcement`, `dry_run_namespaces` (schema 11): the run's enforcement
-- (docs/design.md#audit-before-enforce): 'dry-run' when it was off everywhere,
-- else the namespaces where it was off. Starts before schema 11 enforced.
-- `chained` (schema 11): 1 when the start is also the journal row at
-- first_seq, kind 11 (`writer_started`), which the hash chain covers
-- (docs/journal-chain.md#what-is-chained); 0 for starts recorded before.

CREATE INDEX writer_starts_seq ON writer_starts (first_seq);

CREATE TRIGGER writer_starts_append_only_update BEFORE UPDATE ON writer_starts
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper writer starts are append-only');
END;

CREATE TRIGGER writer_starts_append_only_delete BEFORE DELETE ON writer_starts
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper writer starts are append-only');
END;

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

CREATE VIEW forgotten_sandboxes AS
SELECT seq,
       recorded_at,
       namespace,
       name                                AS sandbox,
       uid                                 AS sandbox_uid,
       json_extract(payload, '$.detail')   AS detail
FROM events
WHERE kind = 'forgotten';

-- Contract: one row per widening policy of each recorded sandbox observation
-- whose list of widening policies differs from that of the sandbox's previous
-- recorded observation (a policy joined or left it, or one's uid, generation
-- or what it widens changed); a sandbox's first observation that has any
-- counts as a change. An observation whose list is unchanged, or empty, has
-- no row. Rows of schema 1-8 record no widening policy.
CREATE VIEW fence_bypasses AS
SELECT o.seq                                                          AS seq,
       strftime('%Y-%m-%dT%H:%M:%S', o.at / 1000, 'unixepoch') ||
         printf('.%03dZ', o.at % 1000)                                AS recorded_at,
       s.namespace                                                    AS namespace,
       s.name                                                         AS sandbox,
       s.uid                                                          AS sandbox_uid,
       json_extract(p.value, '$[0]')                                  AS policy,
       json_extract(p.value, '$[1]')                                  AS policy_uid,
       json_extract(p.value, '$[2]')                                  AS policy_generation,
       (SELECT name FROM journal_names WHERE field = 'widens'
        AND code = json_extract(p.value, '$[3]'))                     AS widens
FROM (SELECT j.seq, j.at, j.subject,
             json_extract(json_patch(COALESCE(b.base, '{}'), json_extract(j.body, '$.o')),
                          '$.bp') AS bp,
             (SELECT json_extract(json_patch(COALESCE(b.base, '{}'), json_extract(prev.body, '$.o')),
                                  '$.bp')
              FROM journal AS prev
              WHERE prev.subject = j.subject AND prev.seq < j.seq AND prev.kind IN (2, 8, 9)
              ORDER BY prev.seq DESC LIMIT 1) AS was
      FROM journal AS j
      JOIN subjects AS b ON b.id = j.subject
      WHERE j.kind IN (2, 8, 9)) AS o
JOIN subjects AS s ON s.id = o.subject
JOIN json_each(o.bp) AS p
WHERE o.bp IS NOT NULL AND o.bp IS NOT o.was;


INSERT INTO journal_kinds (kind, part, event) VALUES
  (1, 0, 'fence_observed'), (2, 0, 'sandbox_observed'), (3, 0, 'decided'),
  (4, 0, 'suspend_intent'), (5, 0, 'suspend_outcome'), (6, 0, 'leadership'),
  (7, 0, 'forgotten'), (8, 0, 'sandbox_observed'), (8, 1, 'decided'),
  (9, 0, 'sandbox_observed'), (9, 1, 'decided'), (9, 2, 'suspend_intent'),
  (10, 0, 'pruned'), (11, 0, 'writer_started');

INSERT INTO journal_names (field, code, name) VALUES
  ('api_version', 0, 'v1beta1'), ('api_version', 1, 'v1alpha1'),
  ('bootstrap_op', 0, ''), ('bootstrap_op', 1, 'create'), ('bootstrap_op', 2, 'restart'),
  ('bootstrap_op', 3, 'stop'), ('bootstrap_op', 4, 'other'),
  ('verdict', 0, 'ignore'), ('verdict', 1, 'suspend'), ('verdict', 2, 'hold'),
  ('verdict', 3, 'healthy'), ('verdict', 4, 'admitting'),
  ('reason', 0, ''), ('reason', 1, 'fence-missing'), ('reason', 2, 'fence-altered'),
  ('reason', 3, 'fence-stale'), ('reason', 4, 'workload-generation-changed'),
  ('reason', 5, 'supervisor-generation-changed'), ('reason', 6, 'fence-bypassed'),
  ('action', 0, 'none'), ('action', 1, 'patch-suspend'),
  ('outcome', 0, 'pending'), ('outcome', 1, 'applied'), ('outcome', 2, 'conflict'),
  ('outcome', 3, 'failed'), ('outcome', 4, 'superseded'),
  ('widens', 0, 'none'), ('widens', 1, 'egress'), ('widens', 2, 'ingress'), ('widens', 3, 'both');
