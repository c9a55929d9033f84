-- Each job names its parent again where the parent is stored; a derived
-- trigger job is not, and its child names none.
ALTER TABLE jobs ADD COLUMN parent_id TEXT COLLATE "C" NOT NULL DEFAULT '';
UPDATE jobs SET parent_id = coalesce((SELECT p.id FROM jobs p
    WHERE p.notification_id = jobs.notification_id AND p.position = jobs.position - 1), '')
WHERE position > 0;
