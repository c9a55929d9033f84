-- Each detail's texts, time and environment back in its row, as a release
-- before 000063 reads them.
CREATE TABLE detail_kinds (kind INTEGER PRIMARY KEY, status TEXT NOT NULL, detail TEXT NOT NULL, source TEXT NOT NULL);
INSERT INTO detail_kinds (kind, status, detail, source) VALUES
    (1, 'Pending', 'Step queued', 'Internal'),
    (2, 'Pending', 'Message created', 'Internal'),
    (3, 'Success', 'Message sent', 'Internal'),
    (4, 'Success', 'Delay is finished', 'Internal'),
    (5, 'Pending', 'Step delayed', 'Internal'),
    (6, 'Success', 'Custom step passed', 'Internal'),
    (7, 'Success', 'Step was skipped based on steps conditions', 'Internal'),
    (8, 'Success', 'Step was filtered based on steps filters', 'Internal'),
    (9, 'Pending', 'Step digested', 'Internal'),
    (10, 'Success', 'Digest triggered events', 'Internal'),
    (11, 'Success', 'Step passed the throttle', 'Internal');

CREATE TABLE execution_details_full (
    seq             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    job_id          TEXT NOT NULL,
    status          TEXT NOT NULL,
    detail          TEXT NOT NULL,
    source          TEXT NOT NULL,
    provider_id     TEXT NOT NULL,
    raw             TEXT,
    is_retry        INTEGER NOT NULL DEFAULT 0,
    is_test         INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL
);

INSERT INTO execution_details_full (seq, id, environment_id, notification_id, job_id, status, detail, source, provider_id, raw, is_retry, is_test, created_at)
SELECT d.seq, d.id, coalesce(n.environment_id, ''), d.notification_id, d.job_id,
       coalesce(k.status, d.status, ''), coalesce(k.detail, d.detail, ''), coalesce(k.source, d.source, ''),
       d.provider_id, d.raw, d.is_retry, d.is_test, coalesce(d.created_at, n.created_at, '')
FROM execution_details d
LEFT JOIN detail_kinds k ON k.kind = d.kind
LEFT JOIN notifications n ON n.id = d.notification_id
ORDER BY d.seq;

DROP TABLE execution_details;
ALTER TABLE execution_details_full RENAME TO execution_details;
CREATE INDEX execution_details_notification ON execution_details (notification_id, seq);
DROP TABLE detail_kinds;
