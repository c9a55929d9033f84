-- Substring search (email, phone and name filters of GET /v2/subscribers)
-- moves from the FTS5 trigram index to an index of suffixes. A trigram's
-- document list grows with the table, and a needle is looked up through
-- whole lists ("use" of "user0091" is in nearly every row), so a search
-- slowed as subscribers grew. Every occurrence of a needle begins one suffix
-- of the value holding it, so the rows holding a needle are the suffixes
-- between the needle and the needle followed by 0xff: one range of a b-tree,
-- found in O(log n) and as long as the matches, however large the table.
--
-- A suffix is kept to its first 32 characters, which bounds what a long
-- value costs; a needle longer than that is looked up by its first 32 and
-- every candidate is checked against the whole needle (as every candidate
-- always is). Suffixes are case-sensitive, as the filters are.

-- suffix_positions holds 1 to 513, the longest value indexed (a name of
-- 256 + 1 + 256 characters), so the triggers below can make one row per
-- character without a recursive query, which a trigger cannot hold.
CREATE TABLE suffix_positions (n INTEGER PRIMARY KEY);
WITH RECURSIVE p(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM p WHERE n < 513)
INSERT INTO suffix_positions SELECT n FROM p;

-- field: 1 email, 2 phone, 3 name (trim(firstName || ' ' || lastName)):
-- small integers take no bytes of their own in a row.
CREATE TABLE subscriber_suffixes (
    field  INTEGER NOT NULL,
    suffix TEXT NOT NULL,
    seq    INTEGER NOT NULL, -- subscribers.seq
    PRIMARY KEY (field, suffix, seq)
) WITHOUT ROWID;

INSERT INTO subscriber_suffixes (field, suffix, seq)
SELECT DISTINCT v.field, substr(v.value, p.n, 32), v.seq
FROM (SELECT seq, 1 AS field, coalesce(email, '') AS value FROM subscribers
      UNION ALL SELECT seq, 2, coalesce(phone, '') FROM subscribers
      UNION ALL SELECT seq, 3, trim(coalesce(first_name, '') || ' ' || coalesce(last_name, '')) FROM subscribers) v
JOIN suffix_positions p ON p.n <= length(v.value);

DROP TRIGGER subscribers_fts_insert;
DROP TRIGGER subscribers_fts_update;
DROP TRIGGER subscribers_fts_delete;
DROP TABLE subscribers_fts;

CREATE TRIGGER subscriber_suffixes_insert AFTER INSERT ON subscribers BEGIN
    INSERT INTO subscriber_suffixes (field, suffix, seq)
    SELECT DISTINCT v.field, substr(v.value, p.n, 32), new.seq
    FROM (SELECT 1 AS field, coalesce(new.email, '') AS value
          UNION ALL SELECT 2, coalesce(new.phone, '')
          UNION ALL SELECT 3, trim(coalesce(new.first_name, '') || ' ' || coalesce(new.last_name, ''))) v
    JOIN suffix_positions p ON p.n <= length(v.value);
END;

CREATE TRIGGER subscriber_suffixes_update AFTER UPDATE OF email, phone, first_name, last_name ON subscribers
WHEN old.email IS NOT new.email OR old.phone IS NOT new.phone
  OR old.first_name IS NOT new.first_name OR old.last_name IS NOT new.last_name
BEGIN
    DELETE FROM subscriber_suffixes WHERE (field, suffix, seq) IN (
        SELECT v.field, substr(v.value, p.n, 32), old.seq
        FROM (SELECT 1 AS field, coalesce(old.email, '') AS value
              UNION ALL SELECT 2, coalesce(old.phone, '')
              UNION ALL SELECT 3, trim(coalesce(old.first_name, '') || ' ' || coalesce(old.last_name, ''))) v
        JOIN suffix_positions p ON p.n <= length(v.value));
    INSERT INTO subscriber_suffixes (field, suffix, seq)
    SELECT DISTINCT v.field, substr(v.value, p.n, 32), new.seq
    FROM (SELECT 1 AS field, coalesce(new.email, '') AS value
          UNION ALL SELECT 2, coalesce(new.phone, '')
          UNION ALL SELECT 3, trim(coalesce(new.first_name, '') || ' ' || coalesce(new.last_name, ''))) v
    JOIN suffix_positions p ON p.n <= length(v.value);
END;

CREATE TRIGGER subscriber_suffixes_delete AFTER DELETE ON subscribers BEGIN
    DELETE FROM subscriber_suffixes WHERE (field, suffix, seq) IN (
        SELECT v.field, substr(v.value, p.n, 32), old.seq
        FROM (SELECT 1 AS field, coalesce(old.email, '') AS value
              UNION ALL SELECT 2, coalesce(old.phone, '')
              UNION ALL SELECT 3, trim(coalesce(old.first_name, '') || ' ' || coalesce(old.last_name, ''))) v
        JOIN suffix_positions p ON p.n <= length(v.value));
END;
