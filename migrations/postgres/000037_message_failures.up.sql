-- The messages that failed, newest first, for the console's overview: a
-- partial index holds only them, so finding the latest costs the same
-- however many messages succeeded around them, and a message that is sent
-- writes nothing to it.
CREATE INDEX messages_failed ON messages (environment_id, created_at) WHERE status = 'error';
