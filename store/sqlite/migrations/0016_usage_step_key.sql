-- A model step's usage record is its key: a turn's (org_id, turn_id,
-- step) is stored once. A step whose write committed but whose answer was
-- lost (cancelled during the commit) is sent again whole; the store then
-- finds the step's record and writes neither it nor the step's messages a
-- second time (store.TurnWrite). Steps count from 1 (0 for a record
-- without one), never below.
--
-- Records an earlier build stored twice for one step (that retry, before
-- the key) are kept once, the first. The rebuild adds the CHECK, which
-- SQLite cannot add to a table in place.
CREATE TABLE usage_keyed (
    id                  INTEGER PRIMARY KEY,
    org_id              TEXT NOT NULL,
    conversation_id     TEXT NOT NULL,
    turn_id             TEXT NOT NULL,
    payer               TEXT NOT NULL,
    model               TEXT NOT NULL,
    step                INTEGER NOT NULL CHECK (step >= 0),
    input_tokens        INTEGER NOT NULL,
    cached_input_tokens INTEGER NOT NULL,
    cache_write_tokens  INTEGER NOT NULL,
    output_tokens       INTEGER NOT NULL,
    cost_micros         INTEGER NOT NULL,
    created_at          TEXT NOT NULL
);

INSERT INTO usage_keyed (id, org_id, conversation_id, turn_id, payer, model, step,
        input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, cost_micros, created_at)
    SELECT id, org_id, conversation_id, turn_id, payer, model, step,
        input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, cost_micros, created_at
    FROM usage
    WHERE id IN (SELECT MIN(id) FROM usage GROUP BY org_id, turn_id, step);

DROP TABLE usage;
ALTER TABLE usage_keyed RENAME TO usage;

-- SumUsage: a payer's records in a time window.
CREATE INDEX usage_by_payer ON usage (org_id, payer, created_at);
-- The step's key; ListUsage reads a turn's records through it, by step.
CREATE UNIQUE INDEX usage_step ON usage (org_id, turn_id, step);
