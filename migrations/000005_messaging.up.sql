-- Messages: one row per delivered channel step, owned by the messaging package.
-- JSON columns hold the wire value as JSON text; times are ISO 8601 UTC strings with milliseconds.
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
    payload             TEXT NOT NULL DEFAULT '{}',
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
);

-- The feed: one subscriber's in_app messages, newest first, ties by id.
CREATE INDEX messages_feed ON messages (environment_id, subscriber_id, channel, created_at DESC, id DESC);
-- GET /v1/messages, newest first, optionally by channel.
CREATE INDEX messages_list ON messages (environment_id, created_at DESC, id DESC);
CREATE INDEX messages_transaction ON messages (environment_id, transaction_id);
CREATE INDEX messages_external_subscriber ON messages (environment_id, external_subscriber);
