-- The (timestamp, token) pairs of signed provider receipts already taken
-- (Mailgun's), so that one captured and sent again is refused. Only a
-- correctly signed, fresh receipt adds a row, and rows older than the
-- signature's tolerance go (integrations.Store.replayed): the table holds
-- minutes of receipts, never more.
CREATE TABLE receipt_tokens (
    integration_id TEXT NOT NULL,
    token          TEXT NOT NULL,
    seen_at        TEXT NOT NULL,
    PRIMARY KEY (integration_id, token)
);
CREATE INDEX receipt_tokens_seen ON receipt_tokens (seen_at);
