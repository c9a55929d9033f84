-- A notification and a message hold "" for their organization, which is
-- their environment's (docs/storage.md, "Values left out"): the readers
-- put it back, so rows written before need no change. The down file
-- writes it out.
SELECT 1;
