-- A notification and a message hold "" for an actor of none and for an
-- updated_at that is its created_at, and a message "" for a cta of no
-- redirect and no buttons and for a delivery at its creation alone
-- (docs/storage.md, "Values left out"): the readers put the values back,
-- so rows written before need no change. The down file writes them out.
SELECT 1;
