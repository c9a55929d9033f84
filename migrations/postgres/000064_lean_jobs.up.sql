-- A job's organization, transaction, subscriber and workflow are its
-- notification's: the notification keeps them once for all its jobs, and
-- the claim reads them from there.
ALTER TABLE jobs DROP COLUMN organization_id;
ALTER TABLE jobs DROP COLUMN transaction_id;
ALTER TABLE jobs DROP COLUMN subscriber_id;
ALTER TABLE jobs DROP COLUMN template_id;
