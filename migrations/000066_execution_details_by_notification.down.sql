-- Back to a rowid table numbered across all notifications: each
-- notification's details keep their order, numbered in (notification, seq)
-- order.
CREATE TABLE execution_details_rowid (
    seq             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    job_id          TEXT NOT NULL,
    kind            INTEGER NOT NULL DEFAULT 0,
    status          TEXT,
    detail          TEXT,
    source          TEXT,
    provider_id     TEXT NOT NULL,
    raw             TEXT,
    is_retry        INTEGER NOT NULL DEFAULT 0,
    is_test         INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT
);

INSERT INTO execution_details_rowid (seq, id, notification_id, job_id, kind, status, detail, source, provider_id, raw, is_retry, is_test, created_at)
SELECT row_number() OVER (ORDER BY notification_id, seq), id, notification_id, job_id, kind, status, detail, source, provider_id, raw, is_retry, is_test, created_at
FROM execution_details;

DROP TABLE execution_details;
ALTER TABLE execution_details_rowid RENAME TO execution_details;
CREATE INDEX execution_details_notification ON execution_details (notification_id, seq);
