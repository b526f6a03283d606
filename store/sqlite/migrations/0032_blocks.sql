-- 0032: the persona-scoped block list (store.Blocks): people an agent no
-- longer answers.

CREATE TABLE blocks (
    org_id     TEXT NOT NULL,
    agent      TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    reason     TEXT NOT NULL CHECK (length(reason) <= 300),
    blocked_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (org_id, agent, user_id)
);

-- Erasing a person deletes their blocks.
CREATE INDEX blocks_by_user ON blocks (org_id, user_id);
