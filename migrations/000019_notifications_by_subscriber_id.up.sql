-- GET /v1/notifications matches its subscriber filters by the subscriber's
-- _id, as the platform does, so that a subscriber deleted and created again
-- under the same subscriberId does not list the earlier one's
-- notifications. notifications_subscriber is keyed by that _id, and the
-- subscriberId copied at trigger time (subscriber_ref) is read by nothing.
-- The upgrade rewrites the table once.
DROP INDEX notifications_subscriber;
ALTER TABLE notifications DROP COLUMN subscriber_ref;
CREATE INDEX notifications_subscriber ON notifications (environment_id, subscriber_id, created_at);
