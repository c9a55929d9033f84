-- Several Herald instances may share the database (issue 40): what one
-- holds names it, and another takes it over only once the holder's
-- heartbeat is stale (instances). owner is the holding instance's ID (''
-- for none). An idempotency key in flight is its request's instance's; a
-- fan-out (broadcast or topics) is the instance's writing it, for as long
-- as lease_until, which each batch moves on.
ALTER TABLE idempotency_keys ADD COLUMN owner TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE activity_broadcasts ADD COLUMN owner TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE activity_broadcasts ADD COLUMN lease_until TEXT COLLATE "C" NOT NULL DEFAULT '';

-- Each job row is rewritten at its claim and at its settlement: room left
-- in each page keeps a job's new version on its page, and autovacuum visits
-- the table after a twentieth of it changed rather than a fifth.
ALTER TABLE jobs SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.05, autovacuum_analyze_scale_factor = 0.05);
