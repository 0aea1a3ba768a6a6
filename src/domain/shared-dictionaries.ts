// Dictionaries shared between servers (/dictionary share, follow; the dashboard): a server's admins
// let others follow its dictionary, and a server follows at most a few, each another server's or
// one of the operator's curated lists (CURATED_DICTIONARIES_DIR). Stored by
// src/db/dictionary-sharing.ts; read by src/db/dictionary-entries.ts under the server's own entries.

/** What a server follows: another server's dictionary (by its id) or a curated list (by its name). */
export interface FollowedSource {
  kind: 'guild' | 'curated';
  /** The server's id, or the list's name. */
  source: string;
}

/** One dictionary a server follows, as stored. */
export interface Follow extends FollowedSource {
  guildId: string;
  createdBy: string;
  createdAt: number;
}

/**
 * Most dictionaries one server follows: each is one more layer read for every message (its
 * patterns tried too), as the server's own and its members' are.
 */
export const MAX_FOLLOWS = 3;

/** A curated list's name: its file's name without the extension. */
export const CURATED_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

/** Most curated lists an operator publishes. */
export const MAX_CURATED_LISTS = 50;
