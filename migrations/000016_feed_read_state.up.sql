-- An inbox's tabs filter its feed by read or seen state, and the feed
-- counts every match. Those columns were only in the messages table, so a
-- filtered page sought the subscriber's messages in it to test them, and
-- its count sought every one: 6 to 12 ms a request for an inbox of 20,000
-- messages. Carried at the end of the feed index, they are tested on the
-- index, and a filtered count reads the index alone. A mark-as moves the
-- message's entry within its subscriber's run of the index. The upgrade
-- rebuilds the index once: 1.3 s for 300,000 messages.
DROP INDEX messages_feed;
CREATE INDEX messages_feed ON messages (environment_id, subscriber_id, channel, created_at, id, read, seen);
