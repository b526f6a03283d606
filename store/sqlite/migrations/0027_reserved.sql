-- 0027: held for the artifacts migration, which lands on another branch
-- (migrations run without gaps). Delete this file when that one merges.
SELECT 1;
