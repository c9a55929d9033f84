-- feed_item is the part of a message's feed item that does not
-- change after delivery, as JSON, written with the message: the feed, the
-- hottest read, then reads it and the few columns that change (read, seen,
-- their dates, status, provider, deliveredAt, updatedAt) instead of
-- converting some thirty columns per row. NULL (rows from before this
-- migration, or a message re-rendered by a retry) means the item is built
-- from the columns.
ALTER TABLE messages ADD COLUMN feed_item TEXT;
