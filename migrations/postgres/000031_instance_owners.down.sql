ALTER TABLE jobs RESET (fillfactor, autovacuum_vacuum_scale_factor, autovacuum_analyze_scale_factor);
ALTER TABLE activity_broadcasts DROP COLUMN lease_until;
ALTER TABLE activity_broadcasts DROP COLUMN owner;
ALTER TABLE idempotency_keys DROP COLUMN owner;
