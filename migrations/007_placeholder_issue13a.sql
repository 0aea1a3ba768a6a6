-- Placeholder in branch issue-13a only, so that 008 applies without a gap here.
-- The coordinator deletes this file at merge (the real 007 comes from another branch).
SELECT 1;
