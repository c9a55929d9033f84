DROP TABLE notification_contexts;
