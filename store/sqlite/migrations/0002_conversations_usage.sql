-- 0002: conversations, usage records, and the turn and message fields the
-- agent loop needs. Added columns carry defaults so that rows written under
-- 0001 read back with the new fields at their zero values.

CREATE TABLE conversations (
    org_id     TEXT NOT NULL,
    id         TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    agent      TEXT NOT NULL,
    title      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (org_id, id)
);

-- ListConversations: one user's conversations, most recently updated first.
CREATE INDEX conversations_by_user
    ON conversations (org_id, user_id, updated_at DESC, id);

-- One row per model call. id only keeps insertion order for records that
-- share a step; nothing outside the store sees it.
CREATE TABLE usage (
    id                  INTEGER PRIMARY KEY,
    org_id              TEXT NOT NULL,
    conversation_id     TEXT NOT NULL,
    turn_id             TEXT NOT NULL,
    payer               TEXT NOT NULL,
    model               TEXT NOT NULL,
    step                INTEGER NOT NULL,
    input_tokens        INTEGER NOT NULL,
    cached_input_tokens INTEGER NOT NULL,
    cache_write_tokens  INTEGER NOT NULL,
    output_tokens       INTEGER NOT NULL,
    cost_micros         INTEGER NOT NULL,
    created_at          TEXT NOT NULL
);

-- SumUsage: a payer's records in a time window.
CREATE INDEX usage_by_payer ON usage (org_id, payer, created_at);
-- ListUsage: a turn's records, by step.
CREATE INDEX usage_by_turn ON usage (org_id, turn_id, step);

ALTER TABLE turns ADD COLUMN model     TEXT NOT NULL DEFAULT '';
ALTER TABLE turns ADD COLUMN question  TEXT NOT NULL DEFAULT '';
ALTER TABLE turns ADD COLUMN suggested TEXT NOT NULL DEFAULT '';
ALTER TABLE turns ADD COLUMN steps     INTEGER NOT NULL DEFAULT 0;
-- NULL while the turn runs or is paused (a zero EndedAt).
ALTER TABLE turns ADD COLUMN ended_at  TEXT;

ALTER TABLE messages ADD COLUMN ref      TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN is_error INTEGER NOT NULL DEFAULT 0
    CHECK (is_error IN (0, 1));
