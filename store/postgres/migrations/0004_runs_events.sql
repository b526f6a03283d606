-- 0004: runs and turn events, what the replicas share about the turns
-- they run (store/sqlite's 0011 in PostgreSQL's terms).

-- A conversation's running turn, held by one replica under a lease that
-- its heartbeat renews (RenewRuns); one row per conversation at most. The
-- row's lock is what concurrent claims, renewals, cancels and reapers of
-- one conversation queue on.
CREATE TABLE runs (
    org_id           text COLLATE "C" NOT NULL,
    conversation_id  text COLLATE "C" NOT NULL,
    turn_id          text COLLATE "C" NOT NULL,
    user_id          text COLLATE "C" NOT NULL,
    replica          text COLLATE "C" NOT NULL,
    started_at       timestamptz NOT NULL,
    expires_at       timestamptz NOT NULL,
    cancel_requested boolean NOT NULL DEFAULT false,
    PRIMARY KEY (org_id, conversation_id)
);

-- RenewRuns: a replica's runs.
CREATE INDEX runs_by_replica ON runs (replica);
-- RequestCancelUser: a user's runs.
CREATE INDEX runs_by_user ON runs (org_id, user_id);
-- ReapRuns: the runs whose lease passed.
CREATE INDEX runs_by_expiry ON runs (expires_at);

-- A turn's event stream, numbered by its writer from 1. data is the
-- event's JSON as bytea: a model's output may hold NUL or invalid UTF-8,
-- which text refuses.
CREATE TABLE turn_events (
    org_id          text COLLATE "C" NOT NULL,
    turn_id         text COLLATE "C" NOT NULL,
    seq             bigint NOT NULL CHECK (seq > 0),
    conversation_id text COLLATE "C" NOT NULL,
    kind            text NOT NULL,
    data            bytea NOT NULL,
    created_at      timestamptz NOT NULL,
    -- ListTurnEvents: a prefix of the key, in Seq order.
    PRIMARY KEY (org_id, turn_id, seq)
);

-- Deleting a conversation deletes its turns' events.
CREATE INDEX turn_events_by_conversation ON turn_events (org_id, conversation_id);
-- DeleteTurnEventsBefore: retention.
CREATE INDEX turn_events_by_created ON turn_events (created_at);
