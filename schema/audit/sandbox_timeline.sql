-- The full timeline of one sandbox: its namespace's fence changes, what was
-- observed, decided and done, in journal order.
-- Parameters, both required: @namespace and @sandbox. Without them it stops
-- with an error saying so (exit code 1), instead of printing nothing.
-- Prints aligned columns under a header line (sqlite3 prints nothing for no rows):
--   sqlite3 -readonly journal.db -cmd ".parameter set @namespace openshell-agents" \
--     -cmd ".parameter set @sandbox active-1" < schema/audit/sandbox_timeline.sql
.bail on
.headers on
.mode column --wrap 0
-- The guard: a row without a parameter trips the trigger (temp objects only:
-- -readonly allows them, the journal is not touched).
CREATE TEMP TABLE IF NOT EXISTS sandbox_timeline_parameters (value TEXT);
CREATE TEMP TRIGGER IF NOT EXISTS sandbox_timeline_needs_parameters
BEFORE INSERT ON sandbox_timeline_parameters WHEN NEW.value IS NULL OR NEW.value = ''
BEGIN
  SELECT RAISE(ABORT, 'sandbox_timeline.sql needs @namespace and @sandbox: sqlite3 -readonly JOURNAL -cmd ".parameter set @namespace NAMESPACE" -cmd ".parameter set @sandbox NAME" < schema/audit/sandbox_timeline.sql');
END;
INSERT INTO sandbox_timeline_parameters VALUES (@namespace), (@sandbox);
SELECT seq,
       recorded_at,
       kind,
       CASE kind
         WHEN 'fence_observed' THEN
           json_extract(payload, '$.policy') ||
           CASE WHEN json_extract(payload, '$.present')
                THEN ' generation ' || json_extract(payload, '$.generation') ||
                     CASE WHEN json_extract(payload, '$.intact') THEN ', intact' ELSE ', ALTERED' END
                ELSE ' absent' END
         WHEN 'sandbox_observed' THEN
           'generation ' || json_extract(payload, '$.sandbox.generation') || ', ' ||
           CASE WHEN json_extract(payload, '$.sandbox.should_run') THEN 'running' ELSE 'suspended' END ||
           ', admitted under fence generation ' || COALESCE(json_extract(payload, '$.sandbox.fence_generation'), 'none') ||
           ', fence now at ' || json_extract(payload, '$.workload_fence.generation') ||
           CASE WHEN json_extract(payload, '$.sandbox.spare') THEN ', a spare' ELSE '' END ||
           COALESCE(', widened by ' ||
                    (SELECT group_concat(json_extract(p.value, '$.policy') || ' (' ||
                                         json_extract(p.value, '$.widens') || ')', ', ')
                     FROM json_each(payload, '$.bypass') AS p), '')
         WHEN 'decided' THEN
           json_extract(payload, '$.verdict') ||
           CASE WHEN json_extract(payload, '$.reason') <> '' THEN ' (' || json_extract(payload, '$.reason') || ')' ELSE '' END ||
           ' -> ' || json_extract(payload, '$.action')
         WHEN 'suspend_intent' THEN
           'intent: suspend, ' || json_extract(payload, '$.reason') || ', resourceVersion ' ||
           json_extract(payload, '$.resource_version')
         WHEN 'suspend_outcome' THEN
           json_extract(payload, '$.outcome') ||
           COALESCE(' at generation ' || json_extract(payload, '$.applied_generation'), '') || ' (intent ' || ref_seq || ')'
       END AS what
FROM events
WHERE (kind = 'fence_observed' AND namespace = @namespace)
   OR (kind IN ('sandbox_observed', 'decided', 'suspend_intent', 'suspend_outcome')
       AND namespace = @namespace AND name = @sandbox)
ORDER BY seq;
