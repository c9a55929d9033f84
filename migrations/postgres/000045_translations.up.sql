-- Translations (docs/content.md, "Translations"), owned by workflows: the
-- keys of one workflow or layout in one locale, as a JSON object.
-- resource_id is the workflowId or layoutId.
CREATE TABLE translations (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    resource_type   TEXT NOT NULL,
    resource_id     TEXT NOT NULL,
    locale          TEXT NOT NULL,
    content         TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (environment_id, resource_type, resource_id, locale)
);
