-- 011_personal_dictionary: each member's own readings (word -> reading), applied to their messages
-- and name in every server this host reads, after the server's entries (src/db/personal-dictionary.ts).
-- Keyed by user only: a member's dictionary follows them across servers.
CREATE TABLE personal_dictionary_entries (
  user_id TEXT NOT NULL,
  word TEXT NOT NULL,
  reading TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, word)
) STRICT, WITHOUT ROWID;

-- Each member's dictionary version, bumped in the same transaction as every change (as dictionary_versions).
CREATE TABLE personal_dictionary_versions (
  user_id TEXT PRIMARY KEY NOT NULL,
  version INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
