-- Each value left out, written out again, as a release before reads it. A
-- detail's derived _id is a hash SQL cannot compute here: it gets a new
-- one, of its notification's seconds.
UPDATE jobs SET created_at = (SELECT n.created_at FROM notifications n WHERE n.id = jobs.notification_id) WHERE created_at = '';
UPDATE jobs SET updated_at = created_at WHERE updated_at = '';
UPDATE execution_details SET job_id = coalesce((SELECT j.id FROM jobs j
	WHERE j.notification_id = execution_details.notification_id AND j.position = 1), '') WHERE job_id = '';
UPDATE execution_details SET id = substr(notification_id, 1, 8) || lower(hex(randomblob(8))) WHERE id = '';
