-- A release before 000062 builds the item of a row without one from its
-- columns.
ALTER TABLE messages ADD COLUMN feed_item TEXT COLLATE "C";
