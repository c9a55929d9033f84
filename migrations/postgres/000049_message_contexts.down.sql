ALTER TABLE messages DROP COLUMN context_keys;
