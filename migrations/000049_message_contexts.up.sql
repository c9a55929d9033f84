-- A message keeps its trigger's context, its sorted type:id keys joined by
-- commas ('' for none): an inbox opened with a context shows the messages
-- whose context is exactly the session's, one comparison per row.
ALTER TABLE messages ADD COLUMN context_keys TEXT NOT NULL DEFAULT '';
