DROP INDEX notifications_subscriber;
ALTER TABLE notifications ADD COLUMN subscriber_ref TEXT NOT NULL DEFAULT '';
UPDATE notifications SET subscriber_ref = coalesce(json_extract(subscriber_snapshot, '$.subscriberId'), '');
CREATE INDEX notifications_subscriber ON notifications (environment_id, subscriber_ref, created_at);
