-- Each job's copy of its notification's ids, as a release before 000064
-- reads them.
ALTER TABLE jobs ADD COLUMN organization_id TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN transaction_id TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN subscriber_id TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN template_id TEXT NOT NULL DEFAULT '';
UPDATE jobs SET (organization_id, transaction_id, subscriber_id, template_id) =
    (SELECT n.organization_id, n.transaction_id, n.subscriber_id, n.template_id FROM notifications n WHERE n.id = jobs.notification_id)
WHERE EXISTS (SELECT 1 FROM notifications n WHERE n.id = jobs.notification_id);
