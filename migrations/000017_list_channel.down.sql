DROP INDEX messages_list;
CREATE INDEX messages_list ON messages (environment_id, created_at, id);
