-- Sandboxes currently held fail-closed behind a stale, altered or missing fence, by namespace.
-- These are converged: fencekeeper journaled them once and sends them nothing.
--   sqlite3 -readonly journal.db < schema/audit/held_behind_stale_fence.sql
SELECT namespace, reason, count(*) AS held, group_concat(sandbox, ', ') AS sandboxes
FROM (SELECT namespace, sandbox, reason FROM sandbox_state WHERE verdict = 'hold' ORDER BY namespace, sandbox)
GROUP BY namespace, reason
ORDER BY namespace, reason;
