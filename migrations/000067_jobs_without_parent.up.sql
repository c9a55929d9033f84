-- A job's parent is always the job one position before it in its
-- notification's chain, and nothing reads the column that named it.
ALTER TABLE jobs DROP COLUMN parent_id;
