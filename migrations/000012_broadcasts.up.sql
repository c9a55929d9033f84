-- activity_broadcasts records each broadcast whose fan-out has not finished,
-- so that one cut by a crash or a stop continues at the next start. The
-- first batch's transaction inserts the row beside its transactionId claim,
-- each later batch's moves last_subscriber_id (the last subscriberId whose
-- notification is committed) with its notifications, and the last batch's
-- deletes it: the row is never ahead of or behind what is committed. request
-- is the broadcast body with its transactionId, from which the plan is
-- rebuilt; actor is the actor the broadcast resolved when it was accepted.
CREATE TABLE activity_broadcasts (
    environment_id     TEXT NOT NULL,
    transaction_id     TEXT NOT NULL,
    organization_id    TEXT NOT NULL,
    request            TEXT NOT NULL,
    actor              TEXT NOT NULL,
    last_subscriber_id TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    PRIMARY KEY (environment_id, transaction_id)
) WITHOUT ROWID;
