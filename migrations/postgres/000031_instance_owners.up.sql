-- Several Herald instances may share the database: what one
-- holds names it, and another takes it over only once the holder's
-- heartbeat is stale (instances). owner is the holding instance's ID (''
-- for none). An idempotency key in flight is its request's instance's; a
-- fan-out (broadcast or topics) is the instance's writing it, for as long
-- as lease_until, which each batch moves on.
ALTER TABLE idempotency_keys ADD COLUMN owner TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE activity_broadcasts ADD COLUMN owner TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE activity_broadcasts ADD COLUMN lease_until TEXT COLLATE "C" NOT NULL DEFAULT '';

