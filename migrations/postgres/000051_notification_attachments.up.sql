-- A trigger's files (payload.attachments), kept apart from its payload so
-- that no template or view reads them: the column holds what
-- sqldb.StoreValue answered (the files once per trigger, under their key
-- when large), '' for none. The sweep of stored values reads the index to
-- know whether a notification still names them.
ALTER TABLE notifications ADD COLUMN attachments TEXT NOT NULL DEFAULT '';
CREATE INDEX notifications_attachments_values ON notifications (attachments) WHERE attachments LIKE '@%';
