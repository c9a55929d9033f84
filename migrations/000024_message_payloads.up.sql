-- A trigger's payload was stored in every message of its notification
-- twice, in payload and in feed_item, beside the notification's own copy:
-- a broadcast of a 1 MB payload to 100 subscribers grew the database by
-- 632 MB. Messaging now keeps it once per notification, here,
-- and every message reads it through its notification_id; an empty
-- payload ({}) is not stored at all. (Messaging keeps its own copy, not a
-- reference to the notification's: an in-app message outlives the
-- activity record of its notification, see docs/retention.md.)
-- WITHOUT ROWID: the key is the only index, where a rowid table would
-- add one for the primary key.
CREATE TABLE message_payloads (
    notification_id TEXT PRIMARY KEY,
    payload         TEXT NOT NULL
) WITHOUT ROWID;

INSERT OR IGNORE INTO message_payloads (notification_id, payload)
SELECT notification_id, payload FROM messages WHERE payload <> '{}';

-- A stored feed item also held what every item of a feed shares (its
-- environment, organization, subscriber, channel and two constants), which
-- the feed now writes from the request. json_remove keeps the rest of the
-- item as it was written, escapes included.
UPDATE messages SET feed_item = json_remove(feed_item, '$.payload', '$._environmentId',
    '$._organizationId', '$._subscriberId', '$.channel', '$._feedId', '$.archived')
WHERE feed_item IS NOT NULL;
ALTER TABLE messages DROP COLUMN payload;

-- A payload goes when the last message of its notification does. Finding
-- whether one is left needs the notification's messages: a message has its
-- environment and transaction, so the transaction's index carries the
-- notification too, and the test reads the index alone.
DROP INDEX messages_transaction;
CREATE INDEX messages_transaction ON messages (environment_id, transaction_id, notification_id);
