-- Each detail's texts, time and environment back in its row, as a release
-- before 000063 reads them.
ALTER TABLE execution_details ADD COLUMN environment_id TEXT COLLATE "C" NOT NULL DEFAULT '';
UPDATE execution_details d SET environment_id = n.environment_id, created_at = coalesce(d.created_at, n.created_at)
FROM notifications n WHERE n.id = d.notification_id;
UPDATE execution_details d SET status = k.status, detail = k.detail, source = k.source
FROM (VALUES
    (1, 'Pending', 'Step queued', 'Internal'),
    (2, 'Pending', 'Message created', 'Internal'),
    (3, 'Success', 'Message sent', 'Internal'),
    (4, 'Success', 'Delay is finished', 'Internal'),
    (5, 'Pending', 'Step delayed', 'Internal'),
    (6, 'Success', 'Custom step passed', 'Internal'),
    (7, 'Success', 'Step was skipped based on steps conditions', 'Internal'),
    (8, 'Success', 'Step was filtered based on steps filters', 'Internal'),
    (9, 'Pending', 'Step digested', 'Internal'),
    (10, 'Success', 'Digest triggered events', 'Internal'),
    (11, 'Success', 'Step passed the throttle', 'Internal')) AS k (kind, status, detail, source)
WHERE d.kind = k.kind;
UPDATE execution_details SET status = coalesce(status, ''), detail = coalesce(detail, ''), source = coalesce(source, ''),
    created_at = coalesce(created_at, '');
ALTER TABLE execution_details DROP COLUMN kind;
ALTER TABLE execution_details ALTER COLUMN status SET NOT NULL, ALTER COLUMN detail SET NOT NULL,
    ALTER COLUMN source SET NOT NULL, ALTER COLUMN created_at SET NOT NULL;
