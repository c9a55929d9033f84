-- Subscriber preferences. One row per subscriber for its global
-- preferences (workflow_id '') and one per subscriber and workflow for its
-- overrides (workflow_id: the workflow's _id). channels is a JSON object of
-- the channels the subscriber set, {"email": false}: a channel absent from
-- it falls through to the next rule (subscribers.Resolve). subscriber_id is
-- the subscriber's _id, so a subscriber deleted and created again starts
-- with no preferences.
CREATE TABLE subscriber_preferences (
    environment_id TEXT NOT NULL,
    subscriber_id  TEXT NOT NULL,
    workflow_id    TEXT NOT NULL,
    channels       TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    PRIMARY KEY (environment_id, subscriber_id, workflow_id)
) WITHOUT ROWID;

-- Topics: a named group of subscribers a trigger can address. key is
-- unique in its environment. The three indexes serve GET /v2/topics's
-- keyset paging by _id, createdAt and updatedAt.
CREATE TABLE topics (
    id              TEXT PRIMARY KEY,
    environment_id  TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    key             TEXT NOT NULL,
    name            TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (environment_id, key)
);
CREATE INDEX topics_env_id ON topics (environment_id, id);
CREATE INDEX topics_env_created ON topics (environment_id, created_at, id);
CREATE INDEX topics_env_updated ON topics (environment_id, updated_at, id);

-- topic_subscribers holds who is in a topic. The primary key orders a
-- topic's members by subscriberId, the order a topic fan-out walks them in
-- with its cursor, as a broadcast walks the environment's subscribers.
-- subscriber_ref is the subscriber's _id; id is the subscription's _id.
CREATE TABLE topic_subscribers (
    topic_id        TEXT NOT NULL,
    subscriber_id   TEXT NOT NULL,
    id              TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    subscriber_ref  TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    PRIMARY KEY (topic_id, subscriber_id)
) WITHOUT ROWID;
CREATE INDEX topic_subscribers_subscriber ON topic_subscribers (subscriber_ref);

-- A deleted subscriber leaves no preferences and no memberships behind.
CREATE TRIGGER subscribers_preferences_delete AFTER DELETE ON subscribers BEGIN
    DELETE FROM subscriber_preferences WHERE environment_id = old.environment_id AND subscriber_id = old.id;
    DELETE FROM topic_subscribers WHERE subscriber_ref = old.id;
END;

-- notification_topics lists each notification a topic reached, in the
-- activity list's order, so GET /v1/notifications?topicKey= reads one
-- topic's entries instead of testing every notification's topics.
CREATE TABLE notification_topics (
    environment_id  TEXT NOT NULL,
    topic_key       TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    PRIMARY KEY (environment_id, topic_key, created_at, notification_id)
) WITHOUT ROWID;

-- A fan-out in activity_broadcasts is a broadcast (every subscriber of the
-- environment) or a trigger to topics (their members), each resumed its way.
ALTER TABLE activity_broadcasts ADD COLUMN kind TEXT NOT NULL DEFAULT 'broadcast';
