-- The inbox (/v1/inbox/*) archives, snoozes and tracks when a message was
-- first seen, as the reference platform's messages do. A snoozed message
-- has snoozed_until set until its snooze ends; an archived one, archived_at.
ALTER TABLE messages ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN archived_at TEXT;
ALTER TABLE messages ADD COLUMN snoozed_until TEXT;
ALTER TABLE messages ADD COLUMN first_seen_date TEXT;
