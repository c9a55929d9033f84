-- The console's team (docs/console.md, "Accounts"): each member signs in
-- with an email and a password, kept as an argon2id hash, and acts with a
-- role. A member added by a setup link has no password until they follow
-- it; one given a one-time password sets their own at the next sign-in
-- (must_change).
CREATE TABLE console_users (
    id              TEXT COLLATE "C" PRIMARY KEY,
    organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    email           TEXT COLLATE "C" NOT NULL,
    name            TEXT COLLATE "C" NOT NULL,
    role            TEXT COLLATE "C" NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
    password_hash   TEXT COLLATE "C" NOT NULL DEFAULT '',
    must_change     INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT COLLATE "C" NOT NULL,
    updated_at      TEXT COLLATE "C" NOT NULL,
    UNIQUE (organization_id, email)
);
-- A session is known by the SHA-256 of its random id, so the table opens
-- none; every instance sharing the database reads the same rows, and a
-- deleted row is a signed-out session everywhere at once.
CREATE TABLE console_sessions (
    hash       TEXT COLLATE "C" PRIMARY KEY,
    user_id    TEXT COLLATE "C" NOT NULL REFERENCES console_users (id) ON DELETE CASCADE,
    created_at TEXT COLLATE "C" NOT NULL,
    seen_at    TEXT COLLATE "C" NOT NULL
);
CREATE INDEX console_sessions_user ON console_sessions (user_id);
-- One-time links, by the SHA-256 of their token: the first admin's setup
-- (no user_id) and a member's invitation to set a password.
CREATE TABLE console_links (
    hash       TEXT COLLATE "C" PRIMARY KEY,
    user_id    TEXT COLLATE "C" REFERENCES console_users (id) ON DELETE CASCADE,
    created_at TEXT COLLATE "C" NOT NULL,
    expires_at TEXT COLLATE "C" NOT NULL
);
