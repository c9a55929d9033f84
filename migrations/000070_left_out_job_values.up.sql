-- A job holds "" for a created_at that is its notification's (outside a
-- digest's or a throttle's group) and for an updated_at that is its
-- created_at, and an execution detail written with its notification ""
-- for its _id, derived from its place, and for its job when that is the
-- notification's first step's (docs/storage.md, "Values left out" and
-- "Derived rows"): the readers put the values back, so rows written before
-- need no change. The down file writes them out.
SELECT 1;
