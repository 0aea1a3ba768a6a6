import type { Db } from './database.ts';
import { Repo } from './repo.ts';
import { rowMapping, type RowOf } from './rows.ts';
import { DICTIONARY_MAX_ENTRIES, type DictionaryFull } from './dictionary-entries.ts';
import type { Clock } from '../util/clock.ts';

// The personal_dictionary_entries table and each member's version (migrations/012): a member's own
// readings, applied to their messages and name in every server after the server's entries
// (DictionaryRepo.list). Limits as a server's: DICTIONARY_MAX_ENTRIES, counted in the write's transaction.

export interface PersonalEntry {
  userId: string;
  word: string;
  reading: string;
  createdAt: number;
}

type Row = RowOf<PersonalEntry>;
const rows = rowMapping<PersonalEntry, Row>();

const statements = (db: Db) => ({
  exists: db.prepare<[string, string], number>('SELECT 1 FROM personal_dictionary_entries WHERE user_id = ? AND word = ?').pluck(),
  upsert: db.prepare<[Row]>(`
    INSERT INTO personal_dictionary_entries (user_id, word, reading, created_at) VALUES (@user_id, @word, @reading, @created_at)
    ON CONFLICT (user_id, word) DO UPDATE SET reading = excluded.reading, created_at = excluded.created_at`),
  delete: db.prepare<[string, string]>('DELETE FROM personal_dictionary_entries WHERE user_id = ? AND word = ?'),
  deleteAll: db.prepare<[string]>('DELETE FROM personal_dictionary_entries WHERE user_id = ?'),
  count: db.prepare<[string], number>('SELECT count(*) FROM personal_dictionary_entries WHERE user_id = ?').pluck(),
  // Longest word first, the order to apply them in (as dictionary_entries).
  list: db.prepare<[string], Row>('SELECT * FROM personal_dictionary_entries WHERE user_id = ? ORDER BY length(word) DESC, word'),
  version: db.prepare<[string], number>('SELECT version FROM personal_dictionary_versions WHERE user_id = ?').pluck(),
  bump: db.prepare<[string]>(
    'INSERT INTO personal_dictionary_versions (user_id, version) VALUES (?, 1) ON CONFLICT (user_id) DO UPDATE SET version = version + 1',
  ),
});

const NONE: readonly PersonalEntry[] = Object.freeze([]);
/** Members whose lists are kept between messages; past this the cache starts again (a list is one query away). */
const CACHED_MEMBERS = 1_000;

export class PersonalDictionaryRepo extends Repo<ReturnType<typeof statements>> {
  /** The last list read per member with its version (the same array until it changes), for DictionaryRepo's cache. */
  readonly #lists = new Map<string, { version: number; entries: readonly PersonalEntry[] }>();

  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements);
  }

  /** Adds the word, or replaces its reading; 'full' (nothing written) when a new word would pass DICTIONARY_MAX_ENTRIES. */
  add(userId: string, word: string, reading: string): Promise<'added' | 'updated' | 'full'> {
    return this.write(() => {
      const existed = this.sql.exists.get(userId, word) !== undefined;
      if (!existed && (this.sql.count.get(userId) ?? 0) >= DICTIONARY_MAX_ENTRIES) return 'full';
      this.sql.upsert.run(rows.toRow({ userId, word, reading, createdAt: this.clock.now() }));
      this.sql.bump.run(userId);
      return existed ? 'updated' : 'added';
    });
  }

  /** Resolves false when the word was not in the member's dictionary. */
  remove(userId: string, word: string): Promise<boolean> {
    return this.write(() => {
      const removed = this.sql.delete.run(userId, word).changes > 0;
      if (removed) this.sql.bump.run(userId);
      return removed;
    });
  }

  /** As DictionaryRepo.import, for one member's dictionary: all or nothing, refused whole past the limit. */
  import(
    userId: string,
    entries: readonly { word: string; reading: string }[],
    mode: 'merge' | 'replace',
  ): Promise<{ ok: true; total: number } | DictionaryFull> {
    return this.write(() => {
      const words = new Set(entries.map((e) => e.word));
      const kept = mode === 'replace' ? 0 : (this.sql.count.get(userId) ?? 0);
      const total = mode === 'replace' ? words.size : kept + [...words].filter((w) => this.sql.exists.get(userId, w) === undefined).length;
      if (total > DICTIONARY_MAX_ENTRIES) return { ok: false as const, total, max: DICTIONARY_MAX_ENTRIES };
      if (mode === 'replace') this.sql.deleteAll.run(userId);
      const now = this.clock.now();
      for (const e of entries) this.sql.upsert.run(rows.toRow({ userId, word: e.word, reading: e.reading, createdAt: now }));
      this.sql.bump.run(userId);
      return { ok: true as const, total: this.sql.count.get(userId) ?? 0 };
    });
  }

  /** The member's entries, longest word first; the same (frozen) array until their dictionary changes. */
  own(userId: string): readonly PersonalEntry[] {
    const version = this.sql.version.get(userId);
    if (version === undefined) return NONE; // never had an entry: nothing to cache
    const cached = this.#lists.get(userId);
    if (cached?.version === version) return cached.entries;
    const entries = Object.freeze(this.sql.list.all(userId).map(rows.fromRow));
    if (this.#lists.size >= CACHED_MEMBERS) this.#lists.clear();
    this.#lists.set(userId, { version, entries });
    return entries;
  }
}
