-- A value a trigger repeats in each notification and message it makes
-- (its payload, overrides, workflow snapshot, a message's content) is
-- stored here once per environment, keyed by its hash, when it is large;
-- the row that holds it holds "@" and the key instead (sqldb.StoreValue).
-- A value goes once no such column names it: each has a partial index of
-- the keys it holds, which a sweep reads alone.
CREATE TABLE stored_values (
    id             TEXT PRIMARY KEY,
    environment_id TEXT NOT NULL,
    body           TEXT NOT NULL,
    used_at        TEXT NOT NULL
);
CREATE INDEX stored_values_environment ON stored_values (environment_id, id);
CREATE INDEX notifications_payload_values ON notifications (payload) WHERE payload LIKE '@%';
CREATE INDEX notifications_overrides_values ON notifications (overrides) WHERE overrides LIKE '@%';
CREATE INDEX notifications_template_values ON notifications (template) WHERE template LIKE '@%';
CREATE INDEX message_payloads_values ON message_payloads (payload) WHERE payload LIKE '@%';
