-- Each notification keeps its copy again: a deleted subscriber's summary
-- where one was kept, the subscriber's _id alone otherwise (its views show
-- a subscriber that still exists as it now is).
UPDATE notifications SET subscriber_snapshot = coalesce(
    (SELECT d.summary FROM deleted_subscribers d
     WHERE d.environment_id = notifications.environment_id AND d.subscriber_id = notifications.subscriber_id),
    '{"_id":"' || subscriber_id || '"}')
WHERE subscriber_snapshot = '';
DROP TABLE deleted_subscribers;
