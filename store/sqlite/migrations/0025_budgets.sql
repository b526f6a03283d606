-- 0025: budgets. Each usage record names the person whose turn made the
-- call (usage.user_id), filled for the records already kept from their
-- conversation's owner ('' where the conversation is gone), so that a
-- person's monthly spend is one indexed range. budgets holds the monthly
-- limits: user_id '' is the organisation's, '*' each person's default,
-- else a person's own; 0 in a unit means no limit in it.
ALTER TABLE usage ADD COLUMN user_id TEXT NOT NULL DEFAULT '';

UPDATE usage SET user_id = COALESCE((SELECT c.user_id FROM conversations c
    WHERE c.org_id = usage.org_id AND c.id = usage.conversation_id), '');

-- SumSpend: a person's records in a month, and the organisation's.
CREATE INDEX usage_by_user ON usage (org_id, user_id, created_at);
CREATE INDEX usage_by_time ON usage (org_id, created_at);

CREATE TABLE budgets (
    org_id      TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    cost_micros INTEGER NOT NULL CHECK (cost_micros >= 0),
    tokens      INTEGER NOT NULL CHECK (tokens >= 0),
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (org_id, user_id)
);
