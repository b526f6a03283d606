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

-- Each person's spend per calendar month (UTC), kept by a trigger in the
-- transaction of every usage insert, so that the check before each model
-- call reads one row for the person and one per person for the
-- organisation, not the month's records. Derived: filled here from the
-- records kept so far, and on import by the trigger as records come in.
-- Sums saturate at the largest integer rather than fail the insert.
-- month is 'YYYY-MM' of created_at (stored in UTC).
CREATE TABLE usage_months (
    org_id              TEXT NOT NULL,
    user_id             TEXT NOT NULL,
    month               TEXT NOT NULL,
    calls               INTEGER NOT NULL,
    input_tokens        INTEGER NOT NULL,
    cached_input_tokens INTEGER NOT NULL,
    cache_write_tokens  INTEGER NOT NULL,
    output_tokens       INTEGER NOT NULL,
    cost_micros         INTEGER NOT NULL,
    PRIMARY KEY (org_id, month, user_id)
);

INSERT INTO usage_months (org_id, user_id, month, calls, input_tokens, cached_input_tokens,
        cache_write_tokens, output_tokens, cost_micros)
    SELECT org_id, user_id, substr(created_at, 1, 7), count(*), SUM(input_tokens), SUM(cached_input_tokens),
        SUM(cache_write_tokens), SUM(output_tokens), SUM(cost_micros)
    FROM usage GROUP BY org_id, user_id, substr(created_at, 1, 7);

CREATE TRIGGER usage_months_add AFTER INSERT ON usage BEGIN
    INSERT INTO usage_months (org_id, user_id, month, calls, input_tokens, cached_input_tokens,
            cache_write_tokens, output_tokens, cost_micros)
        VALUES (NEW.org_id, NEW.user_id, substr(NEW.created_at, 1, 7), 1, NEW.input_tokens,
            NEW.cached_input_tokens, NEW.cache_write_tokens, NEW.output_tokens, NEW.cost_micros)
        ON CONFLICT (org_id, month, user_id) DO UPDATE SET calls = calls + 1,
            input_tokens = CASE WHEN input_tokens > 9223372036854775807 - excluded.input_tokens THEN 9223372036854775807 ELSE input_tokens + excluded.input_tokens END,
            cached_input_tokens = CASE WHEN cached_input_tokens > 9223372036854775807 - excluded.cached_input_tokens THEN 9223372036854775807 ELSE cached_input_tokens + excluded.cached_input_tokens END,
            cache_write_tokens = CASE WHEN cache_write_tokens > 9223372036854775807 - excluded.cache_write_tokens THEN 9223372036854775807 ELSE cache_write_tokens + excluded.cache_write_tokens END,
            output_tokens = CASE WHEN output_tokens > 9223372036854775807 - excluded.output_tokens THEN 9223372036854775807 ELSE output_tokens + excluded.output_tokens END,
            cost_micros = CASE WHEN cost_micros > 9223372036854775807 - excluded.cost_micros THEN 9223372036854775807 ELSE cost_micros + excluded.cost_micros END;
END;
