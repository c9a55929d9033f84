-- Contexts (docs/content.md, "Contexts"), owned by subscribers: a tenant,
-- an app, a region… a trigger is sent on behalf of. context_key is
-- type:id, as notifications keep it; data is a JSON object.
CREATE TABLE contexts (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    context_key     TEXT NOT NULL,
    type            TEXT NOT NULL,
    context_id      TEXT NOT NULL,
    data            TEXT NOT NULL DEFAULT '{}',
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (environment_id, context_key)
);

CREATE INDEX contexts_environment_created ON contexts (environment_id, created_at, id);

CREATE INDEX contexts_environment_id ON contexts (environment_id, id);
