-- Placeholder on branch attach for a migration number another branch of
-- issue 18 owns; the merge replaces this file with that branch's migration
-- (delete this file when that one lands). It changes nothing.
SELECT 1;
