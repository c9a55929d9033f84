-- GET /v1/notifications?severity=high, the alerts that matter, tested every
-- notification of the environment newest first on notifications_list until
-- it had a page: 2.3 ms at 20,000 notifications when few matched, and
-- growing with them. Most notifications have no severity ('none'), so this
-- index holds only the others, and a trigger of severity none writes
-- nothing to it. A page of one severity is read through it.
CREATE INDEX notifications_severity ON notifications (environment_id, severity, created_at) WHERE severity <> 'none';
