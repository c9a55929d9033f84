-- A message keeps a small payload in its own row (docs/storage.md,
-- "Payloads"): the feed reads it with the row instead of seeking
-- message_payloads for each item. "" means the payload is in
-- message_payloads, or empty, as for every row written before.
ALTER TABLE messages ADD COLUMN payload TEXT NOT NULL DEFAULT '';
