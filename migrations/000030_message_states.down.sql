ALTER TABLE messages DROP COLUMN first_seen_date;
ALTER TABLE messages DROP COLUMN snoozed_until;
ALTER TABLE messages DROP COLUMN archived_at;
ALTER TABLE messages DROP COLUMN archived;
