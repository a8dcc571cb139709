-- fencekeeper journal, schema version 2: leadership changes.
--
-- With --leader-elect, every acquired, lost and released lease is journaled
-- as a `leadership` event (no new table: events stays the one append-only
-- log). This view lists them for audit.

CREATE VIEW leadership AS
SELECT seq,
       recorded_at,
       namespace                             AS lease_namespace,
       name                                  AS lease,
       json_extract(payload, '$.identity')   AS identity,
       json_extract(payload, '$.state')      AS state
FROM events
WHERE kind = 'leadership';
