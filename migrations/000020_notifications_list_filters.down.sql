DROP INDEX notifications_list;
CREATE INDEX notifications_list ON notifications (environment_id, created_at, id);
