-- 0030: what is done to a conversation's messages besides writing them
-- (store.MessageMarks): reactions, pins, edited and deleted marks, and
-- threads (a conversation started from another's message).
--
-- Every table leads with (org_id, conversation_id), so deleting a
-- conversation deletes its marks through the primary keys.

CREATE TABLE message_reactions (
    org_id          TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    seq             INTEGER NOT NULL CHECK (seq > 0),
    -- store.MaxEmojiBytes.
    emoji           TEXT NOT NULL CHECK (length(CAST(emoji AS BLOB)) BETWEEN 1 AND 64),
    actor           TEXT NOT NULL CHECK (length(actor) >= 1),
    created_at      TEXT NOT NULL,
    PRIMARY KEY (org_id, conversation_id, seq, emoji, actor)
);

CREATE TABLE message_pins (
    org_id          TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    seq             INTEGER NOT NULL CHECK (seq > 0),
    pinned_by       TEXT NOT NULL CHECK (length(pinned_by) >= 1),
    pinned_at       TEXT NOT NULL,
    PRIMARY KEY (org_id, conversation_id, seq)
);

CREATE TABLE message_marks (
    org_id          TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    seq             INTEGER NOT NULL CHECK (seq > 0),
    edited_at       TEXT,
    deleted_at      TEXT,
    PRIMARY KEY (org_id, conversation_id, seq)
);

-- conversation_id is the thread; parent_seq 0 is the parent itself.
CREATE TABLE conversation_threads (
    org_id          TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    parent_id       TEXT NOT NULL,
    parent_seq      INTEGER NOT NULL CHECK (parent_seq >= 0),
    created_at      TEXT NOT NULL,
    PRIMARY KEY (org_id, conversation_id)
);

-- ListThreads, and deleting a parent, which unlinks its threads.
CREATE INDEX conversation_threads_by_parent ON conversation_threads (org_id, parent_id, parent_seq);
