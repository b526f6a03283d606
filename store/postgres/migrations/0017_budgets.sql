-- 0017: budgets. Each usage record names the person whose turn made the
-- call (usage.user_id), filled for the records already kept from their
-- conversation's owner ('' where the conversation is gone), so that a
-- person's monthly spend is one indexed range. budgets holds the monthly
-- limits: user_id '' is the organisation's, '*' each person's default,
-- else a person's own; 0 in a unit means no limit in it.
ALTER TABLE usage ADD COLUMN user_id text COLLATE "C" NOT NULL DEFAULT '';

UPDATE usage u SET user_id = c.user_id FROM conversations c
    WHERE c.org_id = u.org_id AND c.id = u.conversation_id;

-- SumSpend: a person's records in a month, and the organisation's.
CREATE INDEX usage_by_user ON usage (org_id, user_id, created_at);
CREATE INDEX usage_by_time ON usage (org_id, created_at);

CREATE TABLE budgets (
    org_id      text COLLATE "C" NOT NULL,
    user_id     text COLLATE "C" NOT NULL,
    cost_micros bigint NOT NULL CHECK (cost_micros >= 0),
    tokens      bigint NOT NULL CHECK (tokens >= 0),
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (org_id, user_id)
);
