-- API keys that can be listed, created and revoked while the server runs.
-- id names a key to `herald keys`; source says how it came to be
-- ('generated' at first start, 'configured' by HERALD_API_KEY or
-- HERALD_PROD_API_KEY, 'created' by `herald keys create`, 'unknown' for keys
-- older than this migration); revoked_at, once set, refuses the key.
ALTER TABLE api_keys ADD COLUMN id TEXT;
ALTER TABLE api_keys ADD COLUMN source TEXT NOT NULL DEFAULT 'unknown';
ALTER TABLE api_keys ADD COLUMN revoked_at TEXT;

-- Ids in the ObjectId layout: the creation second, then random bytes.
UPDATE api_keys SET id = lower(printf('%08x', CAST(strftime('%s', created_at) AS INTEGER)) || hex(randomblob(8)));
CREATE UNIQUE INDEX api_keys_id ON api_keys (id);

-- Counts revocations. A running server rereads it to learn that a key it
-- has cached was revoked, by itself or by `herald keys revoke` in another
-- process.
INSERT INTO settings (name, value) VALUES ('api_keys_revoked', '0') ON CONFLICT (name) DO NOTHING;
