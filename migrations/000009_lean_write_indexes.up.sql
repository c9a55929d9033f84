-- Every in-app trigger writes four execution details, and every b-tree a row
-- belongs to is written with it. execution_details is read only by
-- notification (activity/store_read.go), so the table is rebuilt without
-- what cost writes and served no read:
--   * AUTOINCREMENT, which updates sqlite_sequence on every insert. seq stays
--     the rowid, one past the largest: details are never deleted, so it
--     still grows in insertion order, which is all ORDER BY seq needs;
--   * the UNIQUE index on id: ids are generated unique and never looked up;
--   * the index on (job_id, seq), which no query reads;
--   * the foreign key to jobs, a look-up per insert: details are written only
--     by the activity store, in the transaction that writes or holds the job.
CREATE TABLE execution_details_lean (
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
INSERT INTO execution_details_lean
SELECT seq, id, environment_id, notification_id, job_id, status, detail, source, provider_id, raw, is_retry, is_test, created_at
FROM execution_details;
DROP TABLE execution_details;
ALTER TABLE execution_details_lean RENAME TO execution_details;
CREATE INDEX execution_details_notification ON execution_details (notification_id, seq);

-- messages_external_subscriber served only the feed's look-up of a
-- subscriber when messaging runs without the subscribers domain (seeding
-- tools); the server always has it, and every message paid an index write.
DROP INDEX messages_external_subscriber;

-- A job's child is found by its notification and next position
-- (jobs_notification), so parent_id, written on every job, needs no index.
DROP INDEX jobs_parent;
