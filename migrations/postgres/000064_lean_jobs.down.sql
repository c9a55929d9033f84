-- Each job's copy of its notification's ids, as a release before 000064
-- reads them.
ALTER TABLE jobs ADD COLUMN organization_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN transaction_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN subscriber_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN template_id TEXT COLLATE "C" NOT NULL DEFAULT '';
UPDATE jobs j SET organization_id = n.organization_id, transaction_id = n.transaction_id,
    subscriber_id = n.subscriber_id, template_id = n.template_id
FROM notifications n WHERE n.id = j.notification_id;
