-- 014_audit_log: who changed what in a server's settings and dictionary, and when, through the web
-- dashboard or a slash command (src/db/audit-log.ts). Read newest first on the dashboard.
CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY,
  guild_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  -- The member's name when they made the change (shown as it was then).
  user_name TEXT NOT NULL,
  -- 'dashboard' or 'command'.
  via TEXT NOT NULL CHECK (via IN ('dashboard', 'command')),
  -- What changed, e.g. 'settings', 'dictionary.add', 'dictionary.remove', 'dictionary.import'.
  action TEXT NOT NULL,
  -- The change's details as JSON (the fields and their new values, the word and reading).
  detail TEXT NOT NULL,
  at INTEGER NOT NULL
) STRICT;

CREATE INDEX audit_log_by_guild ON audit_log (guild_id, at DESC);
