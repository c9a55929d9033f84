-- interruptions counts the times Herald stopped or crashed while a job was
-- claimed. A claim counts an attempt; when the job is recovered at the next
-- start, the attempt is taken back (its outcome is unknown, and most such
-- jobs never reached their provider) and counted here instead, so that a
-- job that keeps bringing Herald down still ends.
ALTER TABLE jobs ADD COLUMN interruptions INTEGER NOT NULL DEFAULT 0;
