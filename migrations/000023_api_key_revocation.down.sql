DELETE FROM settings WHERE name = 'api_keys_revoked';
DROP INDEX api_keys_id;
-- A revoked key must not come back to life with the column that ended it.
DELETE FROM api_keys WHERE revoked_at IS NOT NULL;
ALTER TABLE api_keys DROP COLUMN revoked_at;
ALTER TABLE api_keys DROP COLUMN source;
ALTER TABLE api_keys DROP COLUMN id;
