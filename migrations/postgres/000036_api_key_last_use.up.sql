-- When each API key last authenticated a request, as the console's API
-- keys page shows it. A process writes it at most once a minute per key
-- (platform's keyring), so it says roughly when, and costs the requests
-- nothing.
ALTER TABLE api_keys ADD COLUMN last_used_at TEXT COLLATE "C";
