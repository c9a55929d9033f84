-- GET /v1/notifications resolves its emails filter to subscribers, as the
-- platform does, so the address a notification copied from its subscriber
-- at trigger time is read by nothing. The upgrade rewrites the table once.
ALTER TABLE notifications DROP COLUMN subscriber_email;
