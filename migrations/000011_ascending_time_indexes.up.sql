-- Five indexes ordered their time columns DESC, for queries that read
-- newest first. SQLite walks an ascending index backwards just as well, so
-- DESC bought no read, and it cost every write: rows arrive in time order,
-- so each new entry went in front of the last one, at a b-tree's first leaf
-- (or a subscriber's or workflow's first), and a full leaf split in half.
-- The lists' pages were left about half empty, and every split rewrote a
-- leaf, its neighbour and their parent. Ascending, a new entry goes last; a
-- full last leaf keeps its entries and starts an empty one after it.
DROP INDEX messages_feed;
CREATE INDEX messages_feed ON messages (environment_id, subscriber_id, channel, created_at, id);
DROP INDEX messages_list;
CREATE INDEX messages_list ON messages (environment_id, created_at, id);
DROP INDEX notifications_list;
CREATE INDEX notifications_list ON notifications (environment_id, created_at, id);
DROP INDEX notifications_subscriber;
CREATE INDEX notifications_subscriber ON notifications (environment_id, subscriber_ref, created_at);
DROP INDEX notifications_template;
CREATE INDEX notifications_template ON notifications (environment_id, template_id, created_at);
