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

-- Each person's spend per calendar month (UTC), kept by a trigger in the
-- transaction of every usage insert (COPY on import included), so that
-- the check before each model call reads one row for the person and one
-- per person for the organisation, not the month's records. Derived:
-- filled here from the records kept so far. Sums saturate at the
-- largest integer rather than fail the insert. month is the month's first
-- day in UTC.
CREATE TABLE usage_months (
    org_id              text COLLATE "C" NOT NULL,
    user_id             text COLLATE "C" NOT NULL,
    month               date NOT NULL,
    calls               bigint NOT NULL,
    input_tokens        bigint NOT NULL,
    cached_input_tokens bigint NOT NULL,
    cache_write_tokens  bigint NOT NULL,
    output_tokens       bigint NOT NULL,
    cost_micros         bigint NOT NULL,
    PRIMARY KEY (org_id, month, user_id)
);

INSERT INTO usage_months (org_id, user_id, month, calls, input_tokens, cached_input_tokens,
        cache_write_tokens, output_tokens, cost_micros)
    SELECT org_id, user_id, date_trunc('month', created_at AT TIME ZONE 'UTC')::date, count(*),
        SUM(input_tokens), SUM(cached_input_tokens), SUM(cache_write_tokens), SUM(output_tokens), SUM(cost_micros)
    FROM usage GROUP BY 1, 2, 3;

CREATE FUNCTION usage_months_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_months (org_id, user_id, month, calls, input_tokens, cached_input_tokens,
            cache_write_tokens, output_tokens, cost_micros)
        VALUES (NEW.org_id, NEW.user_id, date_trunc('month', NEW.created_at AT TIME ZONE 'UTC')::date, 1,
            NEW.input_tokens, NEW.cached_input_tokens, NEW.cache_write_tokens, NEW.output_tokens, NEW.cost_micros)
        ON CONFLICT (org_id, month, user_id) DO UPDATE SET calls = usage_months.calls + 1,
            input_tokens = CASE WHEN usage_months.input_tokens > 9223372036854775807 - excluded.input_tokens THEN 9223372036854775807 ELSE usage_months.input_tokens + excluded.input_tokens END,
            cached_input_tokens = CASE WHEN usage_months.cached_input_tokens > 9223372036854775807 - excluded.cached_input_tokens THEN 9223372036854775807 ELSE usage_months.cached_input_tokens + excluded.cached_input_tokens END,
            cache_write_tokens = CASE WHEN usage_months.cache_write_tokens > 9223372036854775807 - excluded.cache_write_tokens THEN 9223372036854775807 ELSE usage_months.cache_write_tokens + excluded.cache_write_tokens END,
            output_tokens = CASE WHEN usage_months.output_tokens > 9223372036854775807 - excluded.output_tokens THEN 9223372036854775807 ELSE usage_months.output_tokens + excluded.output_tokens END,
            cost_micros = CASE WHEN usage_months.cost_micros > 9223372036854775807 - excluded.cost_micros THEN 9223372036854775807 ELSE usage_months.cost_micros + excluded.cost_micros END;
    RETURN NULL;
END
$$;

CREATE TRIGGER usage_months_add AFTER INSERT ON usage FOR EACH ROW EXECUTE FUNCTION usage_months_add();
