DROP TRIGGER subscriber_suffixes_insert;
DROP TRIGGER subscriber_suffixes_update;
DROP TRIGGER subscriber_suffixes_delete;
DROP TABLE subscriber_suffixes;
DROP TABLE suffix_positions;

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

INSERT INTO subscribers_fts (rowid, email, phone, name)
SELECT seq, coalesce(email, ''), coalesce(phone, ''), trim(coalesce(first_name, '') || ' ' || coalesce(last_name, ''))
FROM subscribers;
