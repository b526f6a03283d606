-- A model step's usage record is its key: a turn's (org_id, turn_id,
-- step) is stored once. A step whose write committed but whose answer was
-- lost (cancelled during the round trip) is sent again whole; the store
-- then finds the step's record and writes neither it nor the step's
-- messages a second time (store.TurnWrite). Steps count from 1 (0 for a
-- record without one), never below.
--
-- Records an earlier build stored twice for one step (that retry, before
-- the key) are kept once, the first.
DELETE FROM usage u USING usage first
    WHERE u.org_id = first.org_id AND u.turn_id = first.turn_id AND u.step = first.step
      AND u.id > first.id;

DROP INDEX usage_by_turn;
-- The step's key; ListUsage reads a turn's records through it, by step.
CREATE UNIQUE INDEX usage_step ON usage (org_id, turn_id, step);
ALTER TABLE usage ADD CONSTRAINT usage_step_check CHECK (step >= 0);
