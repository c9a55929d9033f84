DROP INDEX jobs_claim;
CREATE INDEX jobs_claim ON jobs ((type IN ('email', 'sms', 'chat', 'push')), run_at, id) WHERE run_at IS NOT NULL;
