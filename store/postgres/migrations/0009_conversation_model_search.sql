-- 0009: a conversation's own model, what conversation search reads, and
-- the indexes that deleting a conversation deletes by (store/sqlite's
-- 0017 in PostgreSQL's terms).

-- The "provider:model" a person chose for the conversation; '' follows
-- the agent's model.
ALTER TABLE conversations ADD COLUMN model text NOT NULL DEFAULT '';

-- What FindConversations matches its text against, folded by
-- store.FoldText (case folded, NFC): one row per user message (seq, the
-- message's) and one for the title (seq 0, absent while the title is
-- empty). Never assistant text, tool calls or tool results. Derived from
-- messages and conversations: the store writes it with them, and an
-- import rebuilds it. The rows of messages stored before this migration
-- are written by its Go part (the store folds them, as it folds new ones).
-- COLLATE "C": LIKE compares bytes, as in SQLite, whatever the locale.
CREATE TABLE conversation_search (
    org_id          text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C" NOT NULL,
    seq             bigint NOT NULL CHECK (seq >= 0),
    text            text COLLATE "C" NOT NULL,
    PRIMARY KEY (org_id, conversation_id, seq)
);

-- DeleteConversation: a conversation's turns, results and usage.
CREATE INDEX turns_by_conversation ON turns (org_id, conversation_id);
CREATE INDEX results_by_conversation ON results (org_id, conversation_id);
CREATE INDEX usage_by_conversation ON usage (org_id, conversation_id);
