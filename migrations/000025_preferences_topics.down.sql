ALTER TABLE activity_broadcasts DROP COLUMN kind;
DROP TABLE notification_topics;
DROP TRIGGER subscribers_preferences_delete;
DROP TABLE topic_subscribers;
DROP TABLE topics;
DROP TABLE subscriber_preferences;
