DROP INDEX jobs_group;
CREATE INDEX jobs_group ON jobs (group_key, status, created_at);
CREATE INDEX jobs_transaction ON jobs (environment_id, transaction_id);
