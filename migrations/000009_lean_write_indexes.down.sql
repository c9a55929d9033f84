CREATE INDEX jobs_parent ON jobs (parent_id);
CREATE INDEX messages_external_subscriber ON messages (environment_id, external_subscriber);

CREATE TABLE execution_details_full (
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
INSERT INTO execution_details_full
SELECT seq, id, environment_id, notification_id, job_id, status, detail, source, provider_id, raw, is_retry, is_test, created_at
FROM execution_details;
DROP TABLE execution_details;
ALTER TABLE execution_details_full RENAME TO execution_details;
CREATE INDEX execution_details_job ON execution_details (job_id, seq);
CREATE INDEX execution_details_notification ON execution_details (notification_id, seq);
