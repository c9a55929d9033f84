-- Activity: the triggered-event records (notifications), their job chains, the
-- execution details that explain each job, and the durable queue those jobs
-- form. Times are ISO 8601 UTC strings with milliseconds; JSON
-- documents are stored as TEXT.

-- activity_transactions claims a transactionId once per environment, so a
-- reused one is refused in the trigger's own transaction.
CREATE TABLE activity_transactions (
    environment_id TEXT NOT NULL,
    transaction_id TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    PRIMARY KEY (environment_id, transaction_id)
) WITHOUT ROWID;

-- notifications holds one row per (trigger × subscriber). subscriber_ref and
-- subscriber_email are copied from the subscriber at trigger time so the list
-- can filter by them without asking the subscribers domain.
CREATE TABLE notifications (
    id                       TEXT PRIMARY KEY,
    environment_id           TEXT NOT NULL,
    organization_id          TEXT NOT NULL,
    subscriber_id            TEXT NOT NULL,
    subscriber_ref           TEXT NOT NULL,
    subscriber_email         TEXT NOT NULL DEFAULT '',
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
);
CREATE INDEX notifications_list ON notifications (environment_id, created_at DESC, id DESC);
CREATE INDEX notifications_transaction ON notifications (environment_id, transaction_id);
CREATE INDEX notifications_subscriber ON notifications (environment_id, subscriber_ref, created_at DESC);
CREATE INDEX notifications_template ON notifications (environment_id, template_id, created_at DESC);

-- jobs is the queue. A job is due while run_at is set and has passed; a
-- claim sets lease_owner/lease_until, and a job whose lease has expired (its
-- worker died) is due again. Finishing a job clears run_at, so the claim
-- index only ever holds live work. Each job's parent_id is the job before it
-- in its notification's chain.
CREATE TABLE jobs (
    id               TEXT PRIMARY KEY,
    environment_id   TEXT NOT NULL,
    organization_id  TEXT NOT NULL,
    notification_id  TEXT NOT NULL REFERENCES notifications (id),
    transaction_id   TEXT NOT NULL,
    subscriber_id    TEXT NOT NULL,
    template_id      TEXT NOT NULL,
    parent_id        TEXT NOT NULL DEFAULT '',
    position         INTEGER NOT NULL,
    type             TEXT NOT NULL,
    step_id          TEXT NOT NULL,
    step             TEXT NOT NULL,
    controls         TEXT NOT NULL,
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
);
-- The transaction and parent lookups are the two scans that made the
-- reference platform slow at scale (platform-behavior §13): both indexed.
CREATE INDEX jobs_transaction ON jobs (environment_id, transaction_id);
CREATE INDEX jobs_parent ON jobs (parent_id);
CREATE INDEX jobs_notification ON jobs (notification_id, position);
CREATE INDEX jobs_claim ON jobs (run_at, id) WHERE run_at IS NOT NULL;
-- Digest merges and throttle counts look jobs up by their group (workflow,
-- subscriber, step and key value).
CREATE INDEX jobs_group ON jobs (group_key, status, created_at);
CREATE INDEX jobs_merged ON jobs (merged_digest_id) WHERE merged_digest_id <> '';

-- execution_details records what happened to each job, in order (seq).
CREATE TABLE execution_details (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL UNIQUE,
    environment_id  TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    job_id          TEXT NOT NULL REFERENCES jobs (id),
    status          TEXT NOT NULL,
    detail          TEXT NOT NULL,
    source          TEXT NOT NULL,
    provider_id     TEXT NOT NULL,
    raw             TEXT,
    is_retry        INTEGER NOT NULL DEFAULT 0,
    is_test         INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL
);
CREATE INDEX execution_details_job ON execution_details (job_id, seq);
CREATE INDEX execution_details_notification ON execution_details (notification_id, seq);
