-- fencekeeper journal: the full current schema (version 4).
-- Kept equal to the result of applying migrations/ in order; a test checks it.
-- `events` is the journal proper: append-only (enforced by the triggers
-- below), one row per thing fencekeeper saw, decided or did, with a monotonic
-- `seq`. The *_projection tables are derived from it in the same transaction
-- as each append, so a restart reads O(sandboxes) rows, not the whole journal.
-- The views `transitions`, `fence_observations` and `sandbox_state` are a
-- contract with audit scripts (docs/design.md#tables-and-views): change them only compatibly.

CREATE TABLE schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at TEXT    NOT NULL
) STRICT;

CREATE TABLE events (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, even after a rollback
  recorded_at TEXT    NOT NULL,                   -- RFC 3339 UTC
  kind        TEXT    NOT NULL,                   -- fence_observed | sandbox_observed | decided | suspend_intent | suspend_outcome
  namespace   TEXT    NOT NULL,
  name        TEXT    NOT NULL,                   -- sandbox name, or policy name for fence_observed
  uid         TEXT    NOT NULL,                   -- sandbox uid ('' for fence_observed)
  ref_seq     INTEGER REFERENCES events (seq),    -- suspend_outcome: the intent it resolves
  payload     TEXT    NOT NULL CHECK (json_valid(payload))
) STRICT;

CREATE INDEX events_by_subject ON events (uid, seq);
CREATE INDEX events_by_kind ON events (kind, seq);
CREATE INDEX events_by_ref ON events (ref_seq) WHERE ref_seq IS NOT NULL;

CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: UPDATE is not allowed');
END;

CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: DELETE is not allowed');
END;

-- Latest observation of each namespace policy.
CREATE TABLE fence_projection (
  namespace  TEXT    NOT NULL,
  policy     TEXT    NOT NULL,
  present    INTEGER NOT NULL CHECK (present IN (0, 1)),
  policy_uid TEXT    NOT NULL,
  generation INTEGER NOT NULL,
  intact     INTEGER NOT NULL CHECK (intact IN (0, 1)),
  seq        INTEGER NOT NULL REFERENCES events (seq),
  updated_at TEXT    NOT NULL,
  PRIMARY KEY (namespace, policy)
) STRICT, WITHOUT ROWID;

-- Latest observation, decision and suspend history of each sandbox.
-- refused_intent_seq (added by 0003 with ALTER TABLE ... ADD COLUMN, hence
-- SQLite's layout of the last line): the latest intent whose latest outcome
-- is `failed`, which a retry sends again instead of recording a new intent.
CREATE TABLE sandbox_projection (
  sandbox_uid         TEXT    PRIMARY KEY,
  namespace           TEXT    NOT NULL,
  name                TEXT    NOT NULL,
  verdict             TEXT,
  reason              TEXT,
  action              TEXT,
  observed_generation INTEGER,
  observation         TEXT    CHECK (observation IS NULL OR json_valid(observation)),
  observation_seq     INTEGER REFERENCES events (seq),
  decision            TEXT    CHECK (decision IS NULL OR json_valid(decision)),
  decision_seq        INTEGER REFERENCES events (seq),
  pending_intent_seq  INTEGER REFERENCES events (seq),
  applied_generation  INTEGER,
  updated_at          TEXT    NOT NULL
, refused_intent_seq INTEGER REFERENCES events (seq)) STRICT;

CREATE INDEX sandbox_projection_by_name ON sandbox_projection (namespace, name);

-- Contract: one row per suspend intent with its latest outcome. `writer` (0004)
-- is the writer id of the process that issued it ('' before writer ids).
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

-- Leadership changes (with --leader-elect): acquired, lost, released.
CREATE VIEW leadership AS
SELECT seq,
       recorded_at,
       namespace                             AS lease_namespace,
       name                                  AS lease,
       json_extract(payload, '$.identity')   AS identity,
       json_extract(payload, '$.state')      AS state
FROM events
WHERE kind = 'leadership';

-- Sandboxes that left the cluster (`forgotten` events), newest last.
CREATE VIEW forgotten_sandboxes AS
SELECT seq,
       recorded_at,
       namespace,
       name                                AS sandbox,
       uid                                 AS sandbox_uid,
       json_extract(payload, '$.detail')   AS detail
FROM events
WHERE kind = 'forgotten';
