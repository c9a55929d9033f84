ALTER TABLE topic_subscribers DROP COLUMN updated_at;
ALTER TABLE topic_subscribers DROP COLUMN name;
