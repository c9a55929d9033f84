-- Integrations: configured connections to providers, one channel each.
-- credentials holds AES-256-GCM ciphertext (version byte, nonce, sealed JSON),
-- never plaintext. Rows are soft-deleted: deleted rows stay for the record but
-- no longer count for identifier uniqueness or primary selection.
CREATE TABLE integrations (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id),
    environment_id  TEXT NOT NULL REFERENCES environments (id),
    name            TEXT NOT NULL,
    identifier      TEXT NOT NULL,
    provider_id     TEXT NOT NULL,
    channel         TEXT NOT NULL CHECK (channel IN ('in_app', 'email', 'sms', 'chat', 'push')),
    credentials     BLOB NOT NULL,
    configurations  TEXT NOT NULL DEFAULT '{}',
    conditions      TEXT NOT NULL DEFAULT '[]',
    active          INTEGER NOT NULL DEFAULT 0,
    is_primary      INTEGER NOT NULL DEFAULT 0,
    deleted         INTEGER NOT NULL DEFAULT 0,
    deleted_at      TEXT,
    deleted_by      TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);

-- An identifier is unique among an environment's live integrations.
CREATE UNIQUE INDEX integrations_identifier ON integrations (environment_id, identifier) WHERE deleted = 0;
-- At most one primary per channel per environment.
CREATE UNIQUE INDEX integrations_primary ON integrations (environment_id, channel) WHERE is_primary = 1 AND deleted = 0;
-- The organization-wide list and the per-channel lookups of delivery.
CREATE INDEX integrations_organization ON integrations (organization_id, created_at);
CREATE INDEX integrations_channel ON integrations (environment_id, channel, active) WHERE deleted = 0;
