-- A notification no longer keeps a copy of its subscriber's summary: its
-- views show the subscriber as it now is, and, once the subscriber is
-- deleted, the summary kept here at its deletion, one row per deleted
-- subscriber that notifications still name. Notifications written before
-- keep their copies (subscriber_snapshot), which their views still read.
CREATE TABLE deleted_subscribers (
    environment_id TEXT NOT NULL,
    subscriber_id  TEXT NOT NULL, -- the deleted subscriber's _id
    summary        TEXT NOT NULL, -- {_id, subscriberId, firstName, lastName, email, phone}
    PRIMARY KEY (environment_id, subscriber_id)
) WITHOUT ROWID;
