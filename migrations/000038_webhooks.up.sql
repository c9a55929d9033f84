-- Outbound webhooks (docs/webhooks.md), owned by activity. An endpoint's
-- secret is sealed at rest; the one it replaced keeps verifying until
-- previous_until. event_types is a JSON array, NULL for every type.
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

-- The outbox: an event is written in the transaction of the change that
-- raised it, with one delivery per endpoint that wants it, so a crash
-- neither loses nor invents one. payload is the envelope as it is sent.
CREATE TABLE webhook_events (
    id             TEXT PRIMARY KEY,
    environment_id TEXT NOT NULL,
    type           TEXT NOT NULL,
    payload        TEXT NOT NULL,
    created_at     TEXT NOT NULL
);

CREATE INDEX webhook_events_created ON webhook_events (created_at, id);

-- The delivery queue: a delivery is due while run_at is set, and claimed
-- under a lease like a job. attempts is a JSON array, newest last.
-- replays counts the replays asked, so an attempt in flight when one is
-- asked does not settle it away.
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

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, run_at, id) WHERE run_at IS NOT NULL;
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at, id);
