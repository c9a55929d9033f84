ALTER TABLE activity_broadcasts DROP COLUMN lease_until;
ALTER TABLE activity_broadcasts DROP COLUMN owner;
ALTER TABLE idempotency_keys DROP COLUMN owner;
