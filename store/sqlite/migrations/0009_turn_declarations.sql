-- 0009: why each declared tool was declared, when a gate (Deliberate Tool
-- Mode) chose the turn's tools, so a past turn's inspector shows the rule
-- that declared each. The same encoding as exclusions: a JSON array of
-- {"name", "reason"} in declaration order; NULL when no gate applied (or
-- the turn was stored before this column).
ALTER TABLE turns ADD COLUMN declarations TEXT DEFAULT NULL;
-- How many tools selection gave the turn before a gate narrowed it: a turn
-- whose tools the mode hid for now still renders "you can use tools".
-- NULL (0) for a turn stored before this column.
ALTER TABLE turns ADD COLUMN selected INTEGER DEFAULT NULL;
