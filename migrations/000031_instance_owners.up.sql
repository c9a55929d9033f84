-- Several Herald instances may share a PostgreSQL database: what
-- one holds names it, and another takes it over only once the holder's
-- heartbeat is stale. owner is the holding instance's ID ('' for none).
-- An idempotency key in flight is its request's instance's; a fan-out
-- (broadcast or topics) is the instance's writing it, for as long as
-- lease_until, which each batch moves on. On SQLite one process uses the
-- database and reads neither.
ALTER TABLE idempotency_keys ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE activity_broadcasts ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE activity_broadcasts ADD COLUMN lease_until TEXT NOT NULL DEFAULT '';
