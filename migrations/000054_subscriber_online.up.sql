-- A subscriber's online status: is_online (NULL until it first connects or
-- is set) and when it was last seen leaving. subscriber_sockets holds, per
-- process, the subscribers with a live inbox socket open there, so that
-- one process's last socket closing leaves a subscriber online while
-- another process still holds one.
ALTER TABLE subscribers ADD COLUMN is_online INTEGER;
ALTER TABLE subscribers ADD COLUMN last_online_at TEXT;
CREATE TABLE subscriber_sockets (
    subscriber_ref TEXT NOT NULL,
    instance_id    TEXT NOT NULL,
    PRIMARY KEY (subscriber_ref, instance_id)
) WITHOUT ROWID;
