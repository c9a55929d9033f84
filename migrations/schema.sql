-- The schema every migration builds, as SQLite reports it. Generated:
-- go test ./migrations -run TestSchema -update

CREATE TABLE activity_broadcasts (
    environment_id     TEXT NOT NULL,
    transaction_id     TEXT NOT NULL,
    organization_id    TEXT NOT NULL,
    request            TEXT NOT NULL,
    actor              TEXT NOT NULL,
    last_subscriber_id TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL, kind TEXT NOT NULL DEFAULT 'broadcast', owner TEXT NOT NULL DEFAULT '', lease_until TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (environment_id, transaction_id)
) WITHOUT ROWID;

CREATE TABLE activity_transactions (
    environment_id TEXT NOT NULL,
    transaction_id TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    PRIMARY KEY (environment_id, transaction_id)
) WITHOUT ROWID;

CREATE TABLE api_keys (
    hash           TEXT PRIMARY KEY,
    environment_id TEXT NOT NULL REFERENCES environments (id),
    user_id        TEXT NOT NULL REFERENCES users (id),
    hint           TEXT NOT NULL,
    created_at     TEXT NOT NULL
, id TEXT, source TEXT NOT NULL DEFAULT 'unknown', revoked_at TEXT, sealed BLOB, last_used_at TEXT);

CREATE INDEX api_keys_environment ON api_keys (environment_id);

CREATE UNIQUE INDEX api_keys_id ON api_keys (id);

CREATE TABLE console_links (
    hash       TEXT PRIMARY KEY,
    user_id    TEXT REFERENCES console_users (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);

CREATE TABLE console_sessions (
    hash       TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES console_users (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    seen_at    TEXT NOT NULL
);

CREATE INDEX console_sessions_user ON console_sessions (user_id);

CREATE TABLE console_users (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id),
    email           TEXT NOT NULL,
    name            TEXT NOT NULL,
    role            TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
    password_hash   TEXT NOT NULL DEFAULT '',
    must_change     INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (organization_id, email)
);

CREATE TABLE contexts (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    context_key     TEXT NOT NULL,
    type            TEXT NOT NULL,
    context_id      TEXT NOT NULL,
    data            TEXT NOT NULL DEFAULT '{}',
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (environment_id, context_key)
);

CREATE INDEX contexts_environment_created ON contexts (environment_id, created_at, id);

CREATE INDEX contexts_environment_id ON contexts (environment_id, id);

CREATE TABLE deleted_subscribers (
    environment_id TEXT NOT NULL,
    subscriber_id  TEXT NOT NULL, -- the deleted subscriber's _id
    summary        TEXT NOT NULL, -- {_id, subscriberId, firstName, lastName, email, phone}
    PRIMARY KEY (environment_id, subscriber_id)
) WITHOUT ROWID;

CREATE TABLE environments (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id),
    name            TEXT NOT NULL,
    identifier      TEXT NOT NULL UNIQUE,
    parent_id       TEXT REFERENCES environments (id),
    created_at      TEXT NOT NULL, color TEXT NOT NULL DEFAULT '',
    UNIQUE (organization_id, name)
);

CREATE TABLE "execution_details" (
    notification_id TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    id              TEXT NOT NULL,
    job_id          TEXT NOT NULL,
    kind            INTEGER NOT NULL DEFAULT 0, -- 0: status, detail and source are in their columns
    status          TEXT,
    detail          TEXT,
    source          TEXT,
    provider_id     TEXT NOT NULL,
    raw             TEXT,
    is_retry        INTEGER NOT NULL DEFAULT 0,
    is_test         INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT,                        -- NULL: the notification's created_at
    PRIMARY KEY (notification_id, seq)
) WITHOUT ROWID;

CREATE TABLE idempotency_keys (
    environment_id TEXT NOT NULL,
    key            TEXT NOT NULL,
    fingerprint    TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('running', 'done')),
    status         INTEGER NOT NULL DEFAULT 0,
    content_type   TEXT NOT NULL DEFAULT '',
    body           BLOB,
    created_at     TEXT NOT NULL,
    expires_at     TEXT NOT NULL, owner TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (environment_id, key)
) WITHOUT ROWID;

CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);

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

CREATE INDEX integrations_channel ON integrations (environment_id, channel, active) WHERE deleted = 0;

CREATE UNIQUE INDEX integrations_identifier ON integrations (environment_id, identifier) WHERE deleted = 0;

CREATE INDEX integrations_organization ON integrations (organization_id, created_at);

CREATE UNIQUE INDEX integrations_primary ON integrations (environment_id, channel) WHERE is_primary = 1 AND deleted = 0;

CREATE TABLE jobs (
    id               TEXT PRIMARY KEY,
    environment_id   TEXT NOT NULL,
    notification_id  TEXT NOT NULL REFERENCES notifications (id),
    position         INTEGER NOT NULL,
    type             TEXT NOT NULL,
    step_id          TEXT NOT NULL,
    step             TEXT NOT NULL,
    provider_id      TEXT NOT NULL,
    status           TEXT NOT NULL,
    stage            TEXT NOT NULL DEFAULT '',
    digest           TEXT,
    group_key        TEXT NOT NULL DEFAULT '',
    merged_digest_id TEXT NOT NULL DEFAULT '',
    run_at           TEXT,
    lease_owner      TEXT NOT NULL DEFAULT '',
    lease_until      TEXT NOT NULL DEFAULT '',
    attempts         INTEGER NOT NULL DEFAULT 0,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
, interruptions INTEGER NOT NULL DEFAULT 0);

CREATE INDEX jobs_claim ON jobs (
    (CASE type WHEN 'email' THEN 1 WHEN 'sms' THEN 2 WHEN 'chat' THEN 3 WHEN 'push' THEN 4 ELSE 0 END), run_at, id)
    WHERE run_at IS NOT NULL;

CREATE INDEX jobs_group ON jobs (group_key, status, created_at) WHERE group_key <> '';

CREATE INDEX jobs_merged ON jobs (merged_digest_id) WHERE merged_digest_id <> '';

CREATE INDEX jobs_notification ON jobs (notification_id, position);

CREATE TABLE layouts (
    id                  TEXT PRIMARY KEY,
    organization_id     TEXT NOT NULL,
    environment_id      TEXT NOT NULL,
    layout_id           TEXT NOT NULL,
    name                TEXT NOT NULL,
    is_default          INTEGER NOT NULL DEFAULT 0,
    translation_enabled INTEGER NOT NULL DEFAULT 0,
    body                TEXT,
    editor_type         TEXT NOT NULL DEFAULT 'html',
    updated_by          TEXT NOT NULL,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    UNIQUE (environment_id, layout_id)
);

CREATE UNIQUE INDEX layouts_default ON layouts (environment_id) WHERE is_default = 1;

CREATE INDEX layouts_environment_created ON layouts (environment_id, created_at, id);

CREATE TABLE message_payloads (
    notification_id TEXT PRIMARY KEY,
    payload         TEXT NOT NULL
) WITHOUT ROWID;

CREATE INDEX message_payloads_values ON message_payloads (payload) WHERE payload LIKE '@%';

CREATE TABLE messages (
    id                  TEXT PRIMARY KEY,
    environment_id      TEXT NOT NULL,
    organization_id     TEXT NOT NULL,
    -- job_id is UNIQUE so that delivering the same job twice (a retry) never makes a second message.
    job_id              TEXT NOT NULL UNIQUE,
    notification_id     TEXT NOT NULL,
    subscriber_id       TEXT NOT NULL,              -- the subscriber's _id
    external_subscriber TEXT NOT NULL,              -- its subscriberId, for when no subscriber source is wired
    template_id         TEXT NOT NULL DEFAULT '',   -- workflow _id
    message_template_id TEXT NOT NULL DEFAULT '',   -- step _id
    template_identifier TEXT NOT NULL DEFAULT '',   -- workflowId
    step_id             TEXT NOT NULL DEFAULT '',
    transaction_id      TEXT NOT NULL,
    channel             TEXT NOT NULL CHECK (channel IN ('in_app', 'email', 'sms', 'chat', 'push')),
    provider_id         TEXT NOT NULL DEFAULT '',
    content             TEXT NOT NULL DEFAULT '""',  -- JSON: a string, or an EmailBlock array
    subject             TEXT,
    title               TEXT,
    email               TEXT,
    phone               TEXT,
    direct_webhook_url  TEXT,
    avatar              TEXT,
    device_tokens       TEXT,                        -- JSON array or NULL
    cta                 TEXT NOT NULL DEFAULT '{}',
    overrides           TEXT NOT NULL DEFAULT '{}',
    data                TEXT,                        -- JSON object or NULL
    tags                TEXT NOT NULL DEFAULT '[]',
    actor               TEXT NOT NULL DEFAULT '{"type":"none","data":null}',
    subscriber_summary  TEXT NOT NULL DEFAULT '{}',  -- feed item subscriber at delivery time
    status              TEXT NOT NULL CHECK (status IN ('sent', 'error', 'warning')),
    error_id            TEXT,
    error_text          TEXT,
    read                INTEGER NOT NULL DEFAULT 0,
    seen                INTEGER NOT NULL DEFAULT 0,
    last_read_date      TEXT,
    last_seen_date      TEXT,
    delivered_at        TEXT NOT NULL DEFAULT '[]',  -- JSON array of times
    outcome             TEXT NOT NULL DEFAULT '{}',  -- the DeliverJSON outcome, replayed on a repeat call
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL
, archived INTEGER NOT NULL DEFAULT 0, archived_at TEXT, snoozed_until TEXT, first_seen_date TEXT, provider_message_id TEXT, receipt_status TEXT, context_keys TEXT NOT NULL DEFAULT '', payload TEXT NOT NULL DEFAULT '');

CREATE INDEX messages_failed ON messages (environment_id, created_at) WHERE status = 'error';

CREATE INDEX messages_feed ON messages (environment_id, subscriber_id, channel, created_at, id, read, seen, context_keys);

CREATE INDEX messages_list ON messages (environment_id, created_at, id, channel);

CREATE INDEX messages_overrides_values ON messages (overrides) WHERE overrides LIKE '@%';

CREATE INDEX messages_provider_message ON messages (environment_id, provider_message_id) WHERE provider_message_id IS NOT NULL;

CREATE INDEX messages_transaction ON messages (environment_id, transaction_id, notification_id);

CREATE TABLE notification_contexts (
    environment_id  TEXT NOT NULL,
    context_key     TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    PRIMARY KEY (environment_id, context_key, created_at, notification_id)
) WITHOUT ROWID;

CREATE TABLE notification_groups (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    name            TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    UNIQUE (environment_id, name)
);

CREATE TABLE notification_topics (
    environment_id  TEXT NOT NULL,
    topic_key       TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    PRIMARY KEY (environment_id, topic_key, created_at, notification_id)
) WITHOUT ROWID;

CREATE TABLE notifications (
    id                       TEXT PRIMARY KEY,
    environment_id           TEXT NOT NULL,
    organization_id          TEXT NOT NULL,
    subscriber_id            TEXT NOT NULL,
    subscriber_snapshot      TEXT NOT NULL,
    template_id              TEXT NOT NULL,
    workflow_id              TEXT NOT NULL,
    transaction_id           TEXT NOT NULL,
    digested_notification_id TEXT NOT NULL DEFAULT '',
    channels                 TEXT NOT NULL,
    template                 TEXT NOT NULL,
    payload                  TEXT NOT NULL,
    overrides                TEXT NOT NULL,
    recipient                TEXT NOT NULL,
    tags                     TEXT NOT NULL,
    severity                 TEXT NOT NULL,
    critical                 INTEGER NOT NULL,
    preferences              TEXT NOT NULL,
    actor                    TEXT NOT NULL,
    context_keys             TEXT NOT NULL DEFAULT '[]',
    topics                   TEXT NOT NULL DEFAULT '[]',
    created_at               TEXT NOT NULL,
    updated_at               TEXT NOT NULL
, attachments TEXT NOT NULL DEFAULT '');

CREATE INDEX notifications_attachments_values ON notifications (attachments) WHERE attachments LIKE '@%';

CREATE INDEX notifications_list ON notifications (environment_id, created_at, id, severity, channels, template_id, subscriber_id);

CREATE INDEX notifications_overrides_values ON notifications (overrides) WHERE overrides LIKE '@%';

CREATE INDEX notifications_payload_values ON notifications (payload) WHERE payload LIKE '@%';

CREATE INDEX notifications_severity ON notifications (environment_id, severity, created_at) WHERE severity <> 'none';

CREATE INDEX notifications_subscriber ON notifications (environment_id, subscriber_id, created_at);

CREATE INDEX notifications_template ON notifications (environment_id, template_id, created_at);

CREATE INDEX notifications_template_values ON notifications (template) WHERE template LIKE '@%';

CREATE INDEX notifications_transaction ON notifications (environment_id, transaction_id);

CREATE TABLE organizations (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE receipt_tokens (
    integration_id TEXT NOT NULL,
    token          TEXT NOT NULL,
    seen_at        TEXT NOT NULL,
    PRIMARY KEY (integration_id, token)
);

CREATE INDEX receipt_tokens_seen ON receipt_tokens (seen_at);

CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE stored_values (
    id             TEXT PRIMARY KEY,
    environment_id TEXT NOT NULL,
    body           TEXT NOT NULL,
    used_at        TEXT NOT NULL
);

CREATE INDEX stored_values_environment ON stored_values (environment_id, id);

CREATE TABLE subscriber_preferences (
    environment_id TEXT NOT NULL,
    subscriber_id  TEXT NOT NULL,
    workflow_id    TEXT NOT NULL,
    channels       TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL, schedule TEXT,
    PRIMARY KEY (environment_id, subscriber_id, workflow_id)
) WITHOUT ROWID;

CREATE TABLE subscriber_sockets (
    subscriber_ref TEXT NOT NULL,
    instance_id    TEXT NOT NULL,
    PRIMARY KEY (subscriber_ref, instance_id)
) WITHOUT ROWID;

CREATE TABLE subscriber_suffixes (
    field  INTEGER NOT NULL,
    suffix TEXT NOT NULL,
    seq    INTEGER NOT NULL, -- subscribers.seq
    PRIMARY KEY (field, suffix, seq)
) WITHOUT ROWID;

CREATE TABLE subscribers (
    seq             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    subscriber_id   TEXT NOT NULL,
    first_name      TEXT,
    last_name       TEXT,
    email           TEXT,
    phone           TEXT,
    avatar          TEXT,
    locale          TEXT,
    timezone        TEXT,
    data            TEXT,
    channels        TEXT NOT NULL DEFAULT '[]',
    version         INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL, is_online INTEGER, last_online_at TEXT,
    UNIQUE (environment_id, subscriber_id)
);

CREATE INDEX subscribers_env_created ON subscribers (environment_id, created_at, id);

CREATE INDEX subscribers_env_id ON subscribers (environment_id, id);

CREATE INDEX subscribers_env_updated ON subscribers (environment_id, updated_at, id);

CREATE TRIGGER subscriber_suffixes_delete AFTER DELETE ON subscribers BEGIN
    DELETE FROM subscriber_suffixes WHERE (field, suffix, seq) IN (
        SELECT v.field, substr(v.value, p.n, 32), old.seq
        FROM (SELECT 1 AS field, coalesce(old.email, '') AS value
              UNION ALL SELECT 2, coalesce(old.phone, '')
              UNION ALL SELECT 3, trim(coalesce(old.first_name, '') || ' ' || coalesce(old.last_name, ''))) v
        JOIN suffix_positions p ON p.n <= length(v.value));
END;

CREATE TRIGGER subscriber_suffixes_insert AFTER INSERT ON subscribers BEGIN
    INSERT INTO subscriber_suffixes (field, suffix, seq)
    SELECT DISTINCT v.field, substr(v.value, p.n, 32), new.seq
    FROM (SELECT 1 AS field, coalesce(new.email, '') AS value
          UNION ALL SELECT 2, coalesce(new.phone, '')
          UNION ALL SELECT 3, trim(coalesce(new.first_name, '') || ' ' || coalesce(new.last_name, ''))) v
    JOIN suffix_positions p ON p.n <= length(v.value);
END;

CREATE TRIGGER subscriber_suffixes_update AFTER UPDATE OF email, phone, first_name, last_name ON subscribers
WHEN old.email IS NOT new.email OR old.phone IS NOT new.phone
  OR old.first_name IS NOT new.first_name OR old.last_name IS NOT new.last_name
BEGIN
    DELETE FROM subscriber_suffixes WHERE (field, suffix, seq) IN (
        SELECT v.field, substr(v.value, p.n, 32), old.seq
        FROM (SELECT 1 AS field, coalesce(old.email, '') AS value
              UNION ALL SELECT 2, coalesce(old.phone, '')
              UNION ALL SELECT 3, trim(coalesce(old.first_name, '') || ' ' || coalesce(old.last_name, ''))) v
        JOIN suffix_positions p ON p.n <= length(v.value));
    INSERT INTO subscriber_suffixes (field, suffix, seq)
    SELECT DISTINCT v.field, substr(v.value, p.n, 32), new.seq
    FROM (SELECT 1 AS field, coalesce(new.email, '') AS value
          UNION ALL SELECT 2, coalesce(new.phone, '')
          UNION ALL SELECT 3, trim(coalesce(new.first_name, '') || ' ' || coalesce(new.last_name, ''))) v
    JOIN suffix_positions p ON p.n <= length(v.value);
END;

CREATE TRIGGER subscribers_preferences_delete AFTER DELETE ON subscribers BEGIN
    DELETE FROM subscriber_preferences WHERE environment_id = old.environment_id AND subscriber_id = old.id;
    DELETE FROM topic_subscribers WHERE subscriber_ref = old.id;
END;

CREATE TABLE suffix_positions (n INTEGER PRIMARY KEY);

CREATE TABLE topic_subscribers (
    topic_id        TEXT NOT NULL,
    subscriber_id   TEXT NOT NULL,
    id              TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    subscriber_ref  TEXT NOT NULL,
    created_at      TEXT NOT NULL, name TEXT, updated_at TEXT,
    PRIMARY KEY (topic_id, subscriber_id)
) WITHOUT ROWID;

CREATE INDEX topic_subscribers_subscriber ON topic_subscribers (subscriber_ref);

CREATE TABLE topics (
    id              TEXT PRIMARY KEY,
    environment_id  TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    key             TEXT NOT NULL,
    name            TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (environment_id, key)
);

CREATE INDEX topics_env_created ON topics (environment_id, created_at, id);

CREATE INDEX topics_env_id ON topics (environment_id, id);

CREATE INDEX topics_env_updated ON topics (environment_id, updated_at, id);

CREATE TABLE translations (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    resource_type   TEXT NOT NULL,
    resource_id     TEXT NOT NULL,
    locale          TEXT NOT NULL,
    content         TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (environment_id, resource_type, resource_id, locale)
);

CREATE TABLE users (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id),
    first_name      TEXT NOT NULL,
    last_name       TEXT NOT NULL,
    email           TEXT NOT NULL,
    created_at      TEXT NOT NULL
);

CREATE TABLE webhook_deliveries (
    id             TEXT PRIMARY KEY,
    environment_id TEXT NOT NULL,
    endpoint_id    TEXT NOT NULL,
    event_id       TEXT NOT NULL,
    event_type     TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts       TEXT NOT NULL DEFAULT '[]',
    attempt_count  INTEGER NOT NULL DEFAULT 0,
    replays        INTEGER NOT NULL DEFAULT 0,
    run_at         TEXT,
    lease_owner    TEXT NOT NULL DEFAULT '',
    lease_until    TEXT NOT NULL DEFAULT '',
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);

CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at, id);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, run_at, id) WHERE run_at IS NOT NULL;

CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, id);

CREATE TABLE webhook_endpoints (
    id              TEXT PRIMARY KEY,
    environment_id  TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    url             TEXT NOT NULL,
    description     TEXT NOT NULL DEFAULT '',
    event_types     TEXT,
    active          INTEGER NOT NULL DEFAULT 1,
    secret          TEXT NOT NULL,
    previous_secret TEXT NOT NULL DEFAULT '',
    previous_until  TEXT NOT NULL DEFAULT '',
    failing_since   TEXT NOT NULL DEFAULT '',
    disabled_reason TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);

CREATE INDEX webhook_endpoints_environment ON webhook_endpoints (environment_id, id);

CREATE TABLE webhook_events (
    id             TEXT PRIMARY KEY,
    environment_id TEXT NOT NULL,
    type           TEXT NOT NULL,
    payload        TEXT NOT NULL,
    created_at     TEXT NOT NULL
);

CREATE INDEX webhook_events_created ON webhook_events (created_at, id);

CREATE TABLE workflow_snapshots (
    id   TEXT PRIMARY KEY,
    body TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE workflow_versions (
    id             TEXT PRIMARY KEY,
    environment_id TEXT NOT NULL,
    workflow_id    TEXT NOT NULL,
    version        INTEGER NOT NULL,
    snapshot       TEXT NOT NULL,
    note           TEXT NOT NULL DEFAULT '',
    created_by     TEXT NOT NULL,
    created_at     TEXT NOT NULL
);

CREATE UNIQUE INDEX workflow_versions_number ON workflow_versions (workflow_id, version);

CREATE TABLE workflows (
    id                    TEXT PRIMARY KEY,
    organization_id       TEXT NOT NULL,
    environment_id        TEXT NOT NULL,
    workflow_id           TEXT NOT NULL,
    notification_group_id TEXT NOT NULL REFERENCES notification_groups (id),
    creator_id            TEXT NOT NULL,
    name                  TEXT NOT NULL,
    description           TEXT NOT NULL DEFAULT '',
    tags                  TEXT NOT NULL DEFAULT '[]',
    active                INTEGER NOT NULL,
    validate_payload      INTEGER NOT NULL,
    payload_schema        TEXT,
    translation_enabled   INTEGER NOT NULL,
    severity              TEXT NOT NULL,
    preferences           TEXT NOT NULL,
    origin                TEXT NOT NULL,
    steps                 TEXT NOT NULL DEFAULT '[]',
    updated_by            TEXT NOT NULL,
    last_published_at     TEXT,
    last_published_by     TEXT,
    last_triggered_at     TEXT,
    deleted               INTEGER NOT NULL DEFAULT 0,
    deleted_at            TEXT,
    deleted_by            TEXT,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL
);

CREATE UNIQUE INDEX workflows_identifier ON workflows (environment_id, workflow_id) WHERE deleted = 0;

CREATE INDEX workflows_list ON workflows (environment_id, deleted, created_at, id);
