DROP INDEX notifications_attachments_values;
ALTER TABLE notifications DROP COLUMN attachments;
