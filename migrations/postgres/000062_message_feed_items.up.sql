-- An in-app message kept its feed item's unchanging part as JSON beside
-- its columns, which held every value of it again. The feed builds the
-- item from the columns instead, so each value is stored once.
ALTER TABLE messages DROP COLUMN feed_item;
