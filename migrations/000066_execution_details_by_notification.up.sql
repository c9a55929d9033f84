-- A notification's execution details are read, and deleted, only all
-- together. Keyed by (notification_id, seq) in a table without rowids, they
-- sit side by side in their notification's order, and no index beside the
-- table repeats their notification and number. seq now numbers the details
-- of one notification (the writer takes the largest there plus one); rows
-- written before keep their numbers, which still order them.
CREATE TABLE execution_details_keyed (
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

INSERT INTO execution_details_keyed (notification_id, seq, id, job_id, kind, status, detail, source, provider_id, raw, is_retry, is_test, created_at)
SELECT notification_id, seq, id, job_id, kind, status, detail, source, provider_id, raw, is_retry, is_test, created_at
FROM execution_details;

DROP TABLE execution_details;
ALTER TABLE execution_details_keyed RENAME TO execution_details;
