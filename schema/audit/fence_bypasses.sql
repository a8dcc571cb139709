-- The NetworkPolicies that widened each sandbox's fence, as they changed (schema 9): for each
-- observation whose list of widening policies differs from the sandbox's previous one, a line per
-- policy with what it widens (egress, ingress or both). A list that emptied prints no line.
-- Prints aligned columns under a header line (sqlite3 prints nothing for no rows):
--   sqlite3 -readonly journal.db < schema/audit/fence_bypasses.sql
.headers on
.mode column --wrap 0
SELECT namespace, sandbox, seq, recorded_at, policy, policy_generation, widens
FROM fence_bypasses
ORDER BY namespace, sandbox, seq, policy;
