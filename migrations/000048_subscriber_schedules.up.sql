-- A subscriber's schedule (its quiet hours), as JSON, on its global
-- preferences row: the delivery of a channel step reads it with the
-- preferences it already reads. NULL when the subscriber set none.
ALTER TABLE subscriber_preferences ADD COLUMN schedule TEXT;
