-- Retention deletes the oldest rows of these tables at every sweep, and the
-- worker updates jobs as they run: their dead rows' space is reused only
-- once a vacuum has passed. The sweep vacuums the tables it deleted from;
-- between sweeps, autovacuum by default waits for a fifth of a table to be
-- dead, which on a table holding a month of notifications is days of
-- traffic left as bloat. Here it comes once 1% (and at least 1,000 rows)
-- is (docs/retention.md). A vacuum does not cut the table's empty pages
-- off its end either (vacuum_truncate): the next rows would need them
-- again, and cutting them takes a lock that stops every read and write of
-- the table for a moment. Only VACUUM FULL gives pages back to the file
-- system.
ALTER TABLE notifications SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, vacuum_truncate = false);
ALTER TABLE jobs SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, vacuum_truncate = false);
ALTER TABLE execution_details SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, vacuum_truncate = false);
ALTER TABLE notification_contexts SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, vacuum_truncate = false);
ALTER TABLE notification_topics SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, vacuum_truncate = false);
ALTER TABLE activity_transactions SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, vacuum_truncate = false);
ALTER TABLE messages SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, vacuum_truncate = false);
ALTER TABLE message_payloads SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, vacuum_truncate = false);
ALTER TABLE stored_values SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, vacuum_truncate = false);
