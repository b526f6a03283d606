-- 0012: short-term memories (store.ShortTerms), as store/sqlite's 0020:
-- the working memory of a channel or conversation, one row per thread,
-- replaced whole.
--
-- thread is "channel:ID" or "conversation:ID" (turn.Scope.Thread);
-- conversation_id is the conversation it was last written in, so that
-- deleting that conversation deletes it.

CREATE TABLE short_term_memories (
    org_id          text COLLATE "C" NOT NULL,
    thread          text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C" NOT NULL DEFAULT '',
    -- store.MaxShortTermRunes (4,000) characters: the store refuses a
    -- longer text itself; this is the backstop.
    text            text NOT NULL CHECK (char_length(text) BETWEEN 1 AND 4000),
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (org_id, thread)
);

-- DeleteConversation deletes by (org_id, conversation_id).
CREATE INDEX short_term_memories_by_conversation ON short_term_memories (org_id, conversation_id);
