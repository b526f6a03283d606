-- 0001: turns, transcripts and tool result bodies.
-- Every table leads with org_id so that every lookup is scoped to one
-- organisation by its key. Timestamps are UTC text in a fixed-width
-- RFC 3339 form with nanoseconds, so they sort as they compare.

CREATE TABLE turns (
    org_id          TEXT NOT NULL,
    id              TEXT NOT NULL,
    user_id         TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    agent           TEXT NOT NULL,
    timezone        TEXT NOT NULL,
    payer           TEXT NOT NULL,
    tools           TEXT NOT NULL, -- JSON array of tool names, in order
    status          TEXT NOT NULL,
    started_at      TEXT NOT NULL,
    PRIMARY KEY (org_id, id)
);

CREATE TABLE messages (
    org_id          TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    seq             INTEGER NOT NULL CHECK (seq > 0),
    turn_id         TEXT NOT NULL,
    role            TEXT NOT NULL,
    content         TEXT NOT NULL,
    tool_name       TEXT NOT NULL,
    tool_call_id    TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    PRIMARY KEY (org_id, conversation_id, seq)
);

-- A ref is unique across organisations: refs are minted by Quiver, and a
-- reused one is a bug to report, not a second record to keep.
CREATE TABLE results (
    ref             TEXT NOT NULL PRIMARY KEY,
    org_id          TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    turn_id         TEXT NOT NULL,
    tool            TEXT NOT NULL,
    body            TEXT NOT NULL,
    created_at      TEXT NOT NULL
);
