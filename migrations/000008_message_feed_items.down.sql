ALTER TABLE messages DROP COLUMN feed_item;
