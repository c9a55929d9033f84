-- A message keeps its trigger's context, its sorted type:id keys joined by
-- commas ('' for none): an inbox opened with a context shows the messages
-- whose context is exactly the session's, one comparison per row.
ALTER TABLE messages ADD COLUMN context_keys TEXT NOT NULL DEFAULT '';

-- Every inbox read now tests the context, so it is carried at the end of
-- the feed index beside read and seen: the inbox's counts keep reading the
-- index alone instead of seeking each message's row to test it. The upgrade
-- rebuilds the index once.
DROP INDEX messages_feed;
CREATE INDEX messages_feed ON messages (environment_id, subscriber_id, channel, created_at, id, read, seen, context_keys);
