-- Sandboxes currently held fail-closed behind a stale, altered, missing or bypassed fence, by namespace.
-- These are converged: fencekeeper journaled them once and sends them nothing.
-- Prints aligned columns under a header line (sqlite3 prints nothing for no rows):
--   sqlite3 -readonly journal.db < schema/audit/held_behind_stale_fence.sql
.headers on
.mode column --wrap 0
SELECT namespace, reason, count(*) AS held, group_concat(sandbox, ', ') AS sandboxes
FROM (SELECT namespace, sandbox, reason FROM sandbox_state WHERE verdict = 'hold' ORDER BY namespace, sandbox)
GROUP BY namespace, reason
ORDER BY namespace, reason;
