-- Every trigger writes jobs, and every index on jobs is written with them.
--
-- jobs_group serves digest and throttle look-ups, and only their jobs have a
-- group: the other jobs' entries were written (and moved on every status
-- change) for nothing. Queries on it say group_key <> '' so SQLite uses it.
DROP INDEX jobs_group;
CREATE INDEX jobs_group ON jobs (group_key, status, created_at) WHERE group_key <> '';

-- A transaction's jobs are found through its notifications
-- (notifications_transaction, then jobs_notification), which cancel already
-- reads: a second index keyed by transactionId cost a write per job.
DROP INDEX jobs_transaction;
