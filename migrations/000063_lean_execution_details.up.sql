-- Most execution details are one of a few texts that many jobs write word
-- for word (activity's detailKinds): such a detail keeps its kind, a small
-- number, instead of its status, detail and source. A detail written with
-- its notification keeps no time of its own (NULL): it reads the
-- notification's. The environment is its notification's, and is no longer
-- kept either.
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

CREATE TABLE execution_details_lean (
    seq             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    job_id          TEXT NOT NULL,
    kind            INTEGER NOT NULL DEFAULT 0, -- 0: status, detail and source are in their columns
    status          TEXT,
    detail          TEXT,
    source          TEXT,
    provider_id     TEXT NOT NULL,
    raw             TEXT,
    is_retry        INTEGER NOT NULL DEFAULT 0,
    is_test         INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT                         -- NULL: the notification's created_at
);

INSERT INTO execution_details_lean (seq, id, notification_id, job_id, kind, status, detail, source, provider_id, raw, is_retry, is_test, created_at)
SELECT d.seq, d.id, d.notification_id, d.job_id, coalesce(k.kind, 0),
       CASE WHEN k.kind IS NULL THEN d.status END, CASE WHEN k.kind IS NULL THEN d.detail END, CASE WHEN k.kind IS NULL THEN d.source END,
       d.provider_id, d.raw, d.is_retry, d.is_test, CASE WHEN d.created_at = n.created_at THEN NULL ELSE d.created_at END
FROM execution_details d
LEFT JOIN detail_kinds k ON k.status = d.status AND k.detail = d.detail AND k.source = d.source
LEFT JOIN notifications n ON n.id = d.notification_id
ORDER BY d.seq;

DROP TABLE execution_details;
ALTER TABLE execution_details_lean RENAME TO execution_details;
CREATE INDEX execution_details_notification ON execution_details (notification_id, seq);
DROP TABLE detail_kinds;
