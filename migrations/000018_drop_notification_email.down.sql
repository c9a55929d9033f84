ALTER TABLE notifications ADD COLUMN subscriber_email TEXT NOT NULL DEFAULT '';
