-- 0007: why each tool was left out of a turn's toolset when it started, so
-- a past turn's inspector shows the reasons of that time. A JSON array of
-- {"name", "reason"} in the toolset's order; NULL for a turn stored before
-- this column (reasons not recorded), "[]" for one that left nothing out.
ALTER TABLE turns ADD COLUMN exclusions TEXT DEFAULT NULL;
