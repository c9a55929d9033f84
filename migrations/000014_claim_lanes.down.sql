DROP INDEX jobs_claim;
CREATE INDEX jobs_claim ON jobs (run_at, id) WHERE run_at IS NOT NULL;
