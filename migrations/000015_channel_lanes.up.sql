-- Each channel whose steps wait on a provider gets a claim lane of its own
-- (email, sms, chat, push), beside the lane of every other step, so that a
-- slow email provider no longer holds up SMS, chat and push sends either.
-- The claim index leads with the lane.
DROP INDEX jobs_claim;
CREATE INDEX jobs_claim ON jobs (
    (CASE type WHEN 'email' THEN 1 WHEN 'sms' THEN 2 WHEN 'chat' THEN 3 WHEN 'push' THEN 4 ELSE 0 END), run_at, id)
    WHERE run_at IS NOT NULL;
