-- Jobs are claimed in two lanes: the steps that wait on a provider (email,
-- sms, chat, push) and the rest, so that a slow provider's backlog never
-- holds up in-app messages, delays and digests. The claim index leads with
-- the lane, so each lane's claim reads only its own due jobs.
DROP INDEX jobs_claim;
CREATE INDEX jobs_claim ON jobs ((type IN ('email', 'sms', 'chat', 'push')), run_at, id) WHERE run_at IS NOT NULL;
