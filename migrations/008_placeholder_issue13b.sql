-- Placeholder in branch issue-13b only, so that 009 applies without a gap here.
-- The coordinator deletes this file at merge (the real 008 comes from another branch).
SELECT 1;
