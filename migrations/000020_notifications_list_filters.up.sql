-- A page of GET /v1/notifications filtered by severity, channels, or
-- several workflows or subscribers reads notifications_list, every
-- notification of the environment newest first, and sought each in the
-- table to test it: 7 to 13 ms a request at 20,000 notifications when few
-- matched. Carried at the end of notifications_list, those columns are
-- tested on the index and only a page's matches are sought, as 000017 does
-- for the messages' channel. The upgrade rebuilds the index once.
DROP INDEX notifications_list;
CREATE INDEX notifications_list ON notifications (environment_id, created_at, id, severity, channels, template_id, subscriber_id);
