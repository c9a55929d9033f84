DROP INDEX messages_transaction;
CREATE INDEX messages_transaction ON messages (environment_id, transaction_id);
ALTER TABLE messages ADD COLUMN payload TEXT NOT NULL DEFAULT '{}';
UPDATE messages SET payload = coalesce((SELECT p.payload FROM message_payloads p WHERE p.notification_id = messages.notification_id), '{}');
-- The stored feed items lack the payload: the feed builds them from the
-- columns again.
UPDATE messages SET feed_item = NULL;
DROP TABLE message_payloads;
