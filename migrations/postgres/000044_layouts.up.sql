-- Email layouts (docs/content.md, "Layouts"), owned by workflows. body is the email
-- layout's HTML or block-editor document, NULL when its control values
-- were cleared. One layout of an environment is its default.
CREATE TABLE layouts (
    id                  TEXT PRIMARY KEY,
    organization_id     TEXT NOT NULL,
    environment_id      TEXT NOT NULL,
    layout_id           TEXT NOT NULL,
    name                TEXT NOT NULL,
    is_default          INTEGER NOT NULL DEFAULT 0,
    translation_enabled INTEGER NOT NULL DEFAULT 0,
    body                TEXT,
    editor_type         TEXT NOT NULL DEFAULT 'html',
    updated_by          TEXT NOT NULL,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    UNIQUE (environment_id, layout_id)
);

CREATE INDEX layouts_environment_created ON layouts (environment_id, created_at, id);

CREATE UNIQUE INDEX layouts_default ON layouts (environment_id) WHERE is_default = 1;
