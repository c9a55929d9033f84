DROP TRIGGER subscribers_fts_delete;
DROP TRIGGER subscribers_fts_update;
DROP TRIGGER subscribers_fts_insert;
DROP TABLE subscribers_fts;
DROP TABLE subscribers;
