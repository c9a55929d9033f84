-- Subscribers and their channel credentials.
--
-- seq is the rowid that links a row to its entry in subscribers_fts; id is the
-- public _id. channels is the JSON array of channel entries: it lives and dies
-- with its subscriber, so deleting a subscriber removes its credentials too.
CREATE TABLE subscribers (
    seq             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    subscriber_id   TEXT NOT NULL,
    first_name      TEXT,
    last_name       TEXT,
    email           TEXT,
    phone           TEXT,
    avatar          TEXT,
    locale          TEXT,
    timezone        TEXT,
    data            TEXT,
    channels        TEXT NOT NULL DEFAULT '[]',
    version         INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (environment_id, subscriber_id)
);

-- Keyset paging of GET /v2/subscribers walks one of these in either direction
-- (orderBy _id, createdAt or updatedAt, ties broken by _id).
CREATE INDEX subscribers_env_id ON subscribers (environment_id, id);
CREATE INDEX subscribers_env_created ON subscribers (environment_id, created_at, id);
CREATE INDEX subscribers_env_updated ON subscribers (environment_id, updated_at, id);

-- subscribers_fts serves the case-sensitive substring filters (email, phone,
-- name) from a trigram index instead of a LIKE '%x%' scan. It is contentless
-- (the text lives in subscribers) and kept in step by the triggers below, so
-- it changes in the same transaction as the row it indexes. name is
-- "firstName lastName" trimmed, so one substring search covers firstName,
-- lastName and the full name.
CREATE VIRTUAL TABLE subscribers_fts USING fts5 (
    email, phone, name,
    tokenize = 'trigram case_sensitive 1',
    content = '',
    contentless_delete = 1
);

CREATE TRIGGER subscribers_fts_insert AFTER INSERT ON subscribers BEGIN
    INSERT INTO subscribers_fts (rowid, email, phone, name)
    VALUES (new.seq, coalesce(new.email, ''), coalesce(new.phone, ''),
            trim(coalesce(new.first_name, '') || ' ' || coalesce(new.last_name, '')));
END;

-- Every save sets all columns, so the WHEN clause keeps a credentials-only
-- write from rewriting the row's trigrams.
CREATE TRIGGER subscribers_fts_update AFTER UPDATE OF email, phone, first_name, last_name ON subscribers
WHEN old.email IS NOT new.email OR old.phone IS NOT new.phone
  OR old.first_name IS NOT new.first_name OR old.last_name IS NOT new.last_name
BEGIN
    DELETE FROM subscribers_fts WHERE rowid = old.seq;
    INSERT INTO subscribers_fts (rowid, email, phone, name)
    VALUES (new.seq, coalesce(new.email, ''), coalesce(new.phone, ''),
            trim(coalesce(new.first_name, '') || ' ' || coalesce(new.last_name, '')));
END;

CREATE TRIGGER subscribers_fts_delete AFTER DELETE ON subscribers BEGIN
    DELETE FROM subscribers_fts WHERE rowid = old.seq;
END;
