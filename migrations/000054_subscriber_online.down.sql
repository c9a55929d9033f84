DROP TABLE subscriber_sockets;
ALTER TABLE subscribers DROP COLUMN last_online_at;
ALTER TABLE subscribers DROP COLUMN is_online;
