-- 0023: the persona-scoped block list (store.Blocks), as store/sqlite's
-- 0032: people an agent no longer answers.

CREATE TABLE blocks (
    org_id     text COLLATE "C" NOT NULL,
    agent      text COLLATE "C" NOT NULL,
    user_id    text COLLATE "C" NOT NULL,
    reason     text NOT NULL CHECK (char_length(reason) <= 300),
    blocked_by text COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (org_id, agent, user_id)
);

-- Erasing a person deletes their blocks.
CREATE INDEX blocks_by_user ON blocks (org_id, user_id);
