-- What every delivery of a workflow copies from it (each job's step
-- snapshot, a notification's template summary and preferences), stored
-- once: a row written from now on holds the value's key ("#" and a hash)
-- in its column. Rows written before keep the value and read the same.
CREATE TABLE workflow_snapshots (
    id   TEXT COLLATE "C" PRIMARY KEY,
    body TEXT NOT NULL
);
