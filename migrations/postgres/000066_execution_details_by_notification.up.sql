-- seq numbers the details of one notification, as on SQLite, where the
-- details are keyed by (notification_id, seq): the writer takes the largest
-- there plus one, through execution_details_notification. Rows written
-- before keep their numbers, which still order them.
ALTER TABLE execution_details ALTER COLUMN seq DROP IDENTITY;
