-- A workflow's versions (docs/editor.md, "Versions"), owned by workflows:
-- every save writes the workflow as it now is, numbered from 1 per
-- workflow. workflow_id is the workflow's _id, which a changed workflowId
-- keeps; snapshot is the editable workflow as JSON, steps with their _ids.
CREATE TABLE workflow_versions (
    id             TEXT PRIMARY KEY,
    environment_id TEXT NOT NULL,
    workflow_id    TEXT NOT NULL,
    version        INTEGER NOT NULL,
    snapshot       TEXT NOT NULL,
    note           TEXT NOT NULL DEFAULT '',
    created_by     TEXT NOT NULL,
    created_at     TEXT NOT NULL
);

CREATE UNIQUE INDEX workflow_versions_number ON workflow_versions (workflow_id, version);
