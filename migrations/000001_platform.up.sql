-- Tenancy, API keys, idempotency and settings: the tables the platform package owns.
-- Times are stored as ISO 8601 UTC strings with milliseconds, which
-- sort the same as the instants they name.

CREATE TABLE organizations (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- users holds the system user that stands as creator and actor for API-key requests.
CREATE TABLE users (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id),
    first_name      TEXT NOT NULL,
    last_name       TEXT NOT NULL,
    email           TEXT NOT NULL,
    created_at      TEXT NOT NULL
);

CREATE TABLE environments (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id),
    name            TEXT NOT NULL,
    identifier      TEXT NOT NULL UNIQUE,
    parent_id       TEXT REFERENCES environments (id),
    created_at      TEXT NOT NULL,
    UNIQUE (organization_id, name)
);

-- api_keys stores only the SHA-256 of each key; hint is its last four characters,
-- so a listing can show which key is which without revealing it.
CREATE TABLE api_keys (
    hash           TEXT PRIMARY KEY,
    environment_id TEXT NOT NULL REFERENCES environments (id),
    user_id        TEXT NOT NULL REFERENCES users (id),
    hint           TEXT NOT NULL,
    created_at     TEXT NOT NULL
);
CREATE INDEX api_keys_environment ON api_keys (environment_id);

-- idempotency_keys remembers one request per (environment, key) for 24 hours.
-- state is 'running' until the response is stored as 'done'.
CREATE TABLE idempotency_keys (
    environment_id TEXT NOT NULL,
    key            TEXT NOT NULL,
    fingerprint    TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('running', 'done')),
    status         INTEGER NOT NULL DEFAULT 0,
    content_type   TEXT NOT NULL DEFAULT '',
    body           BLOB,
    created_at     TEXT NOT NULL,
    expires_at     TEXT NOT NULL,
    PRIMARY KEY (environment_id, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);

-- settings holds process-wide values generated on first boot, such as the
-- credential encryption secret when HERALD_SECRET is not given.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
