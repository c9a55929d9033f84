ALTER TABLE subscriber_preferences DROP COLUMN schedule;
