-- Nothing to undo: the up migration changes nothing on SQLite.
SELECT 1;
