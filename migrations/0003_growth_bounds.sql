-- fencekeeper journal, schema version 3: the journal grows with changes only.
--
-- A definite refusal (403, 422, a webhook's denial) that persists is retried
-- by sending the refused intent again (same seq, same precondition) rather
-- than recording a new intent each time; the projection remembers which
-- intent that is. A sandbox deleted from the cluster gets a `forgotten` event
-- and its projection row is deleted (its events stay).

ALTER TABLE sandbox_projection ADD COLUMN refused_intent_seq INTEGER REFERENCES events (seq);

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
