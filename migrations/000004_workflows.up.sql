-- Workflows and notification groups.

-- notification_groups holds each environment's default group ("General"),
-- which every workflow belongs to: message summaries need a real
-- _notificationGroupId.
CREATE TABLE notification_groups (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    name            TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    UNIQUE (environment_id, name)
);

-- workflows keeps deleted rows (deleted = 1) so that messages sent by a
-- deleted workflow still resolve its summary. steps is a JSON array of
-- {_id, stepId, name, type, controlValues}: steps are always read and written
-- whole with their workflow and never queried on their own. tags, preferences
-- and payload_schema are JSON too.
CREATE TABLE workflows (
    id                    TEXT PRIMARY KEY,
    organization_id       TEXT NOT NULL,
    environment_id        TEXT NOT NULL,
    workflow_id           TEXT NOT NULL,
    notification_group_id TEXT NOT NULL REFERENCES notification_groups (id),
    creator_id            TEXT NOT NULL,
    name                  TEXT NOT NULL,
    description           TEXT NOT NULL DEFAULT '',
    tags                  TEXT NOT NULL DEFAULT '[]',
    active                INTEGER NOT NULL,
    validate_payload      INTEGER NOT NULL,
    payload_schema        TEXT,
    translation_enabled   INTEGER NOT NULL,
    severity              TEXT NOT NULL,
    preferences           TEXT NOT NULL,
    origin                TEXT NOT NULL,
    steps                 TEXT NOT NULL DEFAULT '[]',
    updated_by            TEXT NOT NULL,
    last_published_at     TEXT,
    last_published_by     TEXT,
    last_triggered_at     TEXT,
    deleted               INTEGER NOT NULL DEFAULT 0,
    deleted_at            TEXT,
    deleted_by            TEXT,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL
);
-- A workflowId names one live workflow per environment; a deleted one frees it.
CREATE UNIQUE INDEX workflows_identifier ON workflows (environment_id, workflow_id) WHERE deleted = 0;
CREATE INDEX workflows_list ON workflows (environment_id, deleted, created_at, id);
