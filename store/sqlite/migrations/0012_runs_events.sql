-- 0012: runs and turn events, what several replicas share about the turns
-- they run (SQLite has one replica, but keeps the same records so that the
-- two backends behave alike and an export moves them).

-- A conversation's running turn, held by one process under a lease that
-- its heartbeat renews (RenewRuns); one row per conversation at most.
CREATE TABLE runs (
    org_id           TEXT NOT NULL,
    conversation_id  TEXT NOT NULL,
    turn_id          TEXT NOT NULL,
    user_id          TEXT NOT NULL,
    replica          TEXT NOT NULL,
    started_at       TEXT NOT NULL,
    expires_at       TEXT NOT NULL,
    cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
    PRIMARY KEY (org_id, conversation_id)
);

-- RenewRuns: a replica's runs.
CREATE INDEX runs_by_replica ON runs (replica);
-- RequestCancelUser: a user's runs.
CREATE INDEX runs_by_user ON runs (org_id, user_id);
-- ReapRuns: the runs whose lease passed.
CREATE INDEX runs_by_expiry ON runs (expires_at);

-- A turn's event stream, numbered by its writer from 1. data is the
-- event's JSON as a blob, byte for byte.
CREATE TABLE turn_events (
    org_id          TEXT NOT NULL,
    turn_id         TEXT NOT NULL,
    seq             INTEGER NOT NULL CHECK (seq > 0),
    conversation_id TEXT NOT NULL,
    kind            TEXT NOT NULL,
    data            BLOB NOT NULL,
    created_at      TEXT NOT NULL,
    -- ListTurnEvents: a prefix of the key, in Seq order.
    PRIMARY KEY (org_id, turn_id, seq)
);

-- Deleting a conversation deletes its turns' events.
CREATE INDEX turn_events_by_conversation ON turn_events (org_id, conversation_id);
-- DeleteTurnEventsBefore: retention.
CREATE INDEX turn_events_by_created ON turn_events (created_at);
