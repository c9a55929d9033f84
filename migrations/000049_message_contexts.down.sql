DROP INDEX messages_feed;
CREATE INDEX messages_feed ON messages (environment_id, subscriber_id, channel, created_at, id, read, seen);
ALTER TABLE messages DROP COLUMN context_keys;
