import type { Db } from './database.ts';
import { KeyedDictionary } from './keyed-dictionary.ts';
import { rowMapping, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';
import type { DictionaryCache } from './dictionary-cache.ts';

// The personal_dictionary_entries table and each member's version (migrations/012): a member's own
// readings, applied to their messages and name in every server after the server's entries
// (DictionaryRepo.list). Limits as a server's: DICTIONARY_MAX_ENTRIES, counted in the write's transaction.

interface PersonalEntry {
  userId: string;
  word: string;
  reading: string;
  createdAt: number;
}

type Row = RowOf<PersonalEntry>;
const rows = rowMapping<PersonalEntry, Row>();

/**
 * A member's dictionary: add, remove, import (all or nothing, refused whole past the limit), own
 * (what is listed) and readable (what DictionaryRepo.list reads, kept in the shared cache) as every
 * keyed dictionary; no writer is recorded.
 */
export class PersonalDictionaryRepo extends KeyedDictionary<PersonalEntry, void> {
  constructor(db: Db, clock?: Clock, cache?: DictionaryCache) {
    super(
      db,
      clock,
      { entries: 'personal_dictionary_entries', versions: 'personal_dictionary_versions', owner: 'user_id', stamped: [] },
      {
        rows,
        record: (userId, word, reading, createdAt) => ({ userId, word, reading, createdAt }),
        // Created with its version table: a member without a version never had an entry.
        versionedFromStart: true,
        ...(cache ? { cache } : {}),
      },
    );
  }
}
