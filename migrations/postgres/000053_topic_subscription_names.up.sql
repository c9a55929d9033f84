-- A topic subscription's name, which PATCH
-- /v2/topics/{topicKey}/subscriptions/{identifier} sets, and when it was
-- last changed (NULL: never since it was made, so its created_at).
ALTER TABLE topic_subscribers ADD COLUMN name TEXT;
ALTER TABLE topic_subscribers ADD COLUMN updated_at TEXT;
