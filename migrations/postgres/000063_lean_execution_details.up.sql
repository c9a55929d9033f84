-- Most execution details are one of a few texts that many jobs write word
-- for word (activity's detailKinds): such a detail keeps its kind, a small
-- number, instead of its status, detail and source. A detail written with
-- its notification keeps no time of its own (NULL): it reads the
-- notification's. The environment is its notification's, and is no longer
-- kept either.
ALTER TABLE execution_details ADD COLUMN kind SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE execution_details ALTER COLUMN status DROP NOT NULL, ALTER COLUMN detail DROP NOT NULL,
    ALTER COLUMN source DROP NOT NULL, ALTER COLUMN created_at DROP NOT NULL;

UPDATE execution_details d SET kind = k.kind, status = NULL, detail = NULL, source = NULL
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
WHERE d.status = k.status AND d.detail = k.detail AND d.source = k.source;

UPDATE execution_details d SET created_at = NULL FROM notifications n
WHERE n.id = d.notification_id AND n.created_at = d.created_at;

ALTER TABLE execution_details DROP COLUMN environment_id;
