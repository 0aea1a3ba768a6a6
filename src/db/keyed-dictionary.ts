import type { Db } from './database.ts';
import { Repo } from './table.ts';
import type { RowMapping } from './rows.ts';
import type { Clock } from '../util/clock.ts';
import { DictionaryCache, type ReadingPair } from './dictionary-cache.ts';
import { DICTIONARY_MAX_PATTERNS, isPatternWord, PATTERN_WORD_GLOB } from '../domain/dictionary-patterns.ts';

// A dictionary table keyed by its owner (a server's entries by guild_id, a member's by user_id) and
// its version table, bumped in the same transaction as every change: the adding, removing and
// importing both dictionaries share, with the entry limit counted in the write's transaction.

/**
 * Most entries one server's own dictionary, or one member's, holds (the operator's global file is
 * not counted). Checked inside the transaction of every change, so two imports summarised side by
 * side cannot both be merged past it.
 */
export const DICTIONARY_MAX_ENTRIES = 5_000;

/**
 * A change refused because the dictionary would hold more than `max` entries, or patterns
 * (DICTIONARY_MAX_PATTERNS) when `kind` says so (`total` of them); nothing was written.
 */
export interface DictionaryFull {
  ok: false;
  kind: 'entries' | 'patterns';
  total: number;
  max: number;
}

/** Where one kind of dictionary is stored. */
interface KeyedDictionaryTables {
  /** The entries: `owner`, word, reading, the `stamped` columns and created_at; unique on (`owner`, word). */
  entries: string;
  /** One version per owner: `owner`, version. */
  versions: string;
  owner: 'guild_id' | 'user_id';
  /** Columns besides reading and created_at that a rewrite of a word replaces (who wrote it). */
  stamped: readonly string[];
}

interface KeyedDictionaryOptions<E, B> {
  rows: RowMapping<E, object>;
  /** The record of an entry written by `by` for `owner` at `now`. */
  record(owner: string, word: string, reading: string, now: number, by: B): E;
  /**
   * True when every owner with entries has a version (the tables were created together): an owner
   * without one has none, read without a query and not cached. Otherwise it reads as version 0.
   */
  versionedFromStart: boolean;
  /** Where the lists read for speech are kept (shared by every kind of dictionary; bounded by size). */
  cache?: DictionaryCache;
}

const statements = (db: Db, t: KeyedDictionaryTables) => {
  const written = ['reading', ...t.stamped, 'created_at'];
  const columns = [t.owner, 'word', ...written];
  return {
    exists: db.prepare<[string, string], number>(`SELECT 1 FROM ${t.entries} WHERE ${t.owner} = ? AND word = ?`).pluck(),
    upsert: db.prepare<[object]>(`
      INSERT INTO ${t.entries} (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})
      ON CONFLICT (${t.owner}, word) DO UPDATE SET ${written.map((c) => `${c} = excluded.${c}`).join(', ')}`),
    delete: db.prepare<[string, string]>(`DELETE FROM ${t.entries} WHERE ${t.owner} = ? AND word = ?`),
    deleteAll: db.prepare<[string]>(`DELETE FROM ${t.entries} WHERE ${t.owner} = ?`),
    count: db.prepare<[string], number>(`SELECT count(*) FROM ${t.entries} WHERE ${t.owner} = ?`).pluck(),
    patterns: db
      .prepare<[string], number>(`SELECT count(*) FROM ${t.entries} WHERE ${t.owner} = ? AND word GLOB '${PATTERN_WORD_GLOB}'`)
      .pluck(),
    // Longest word first, so "GitHub Actions" is replaced before "GitHub" (SQLite length() counts characters).
    list: db.prepare<[string], object>(`SELECT * FROM ${t.entries} WHERE ${t.owner} = ? ORDER BY length(word) DESC, word`),
    // What reading needs of each entry, nothing else (no owner id, writer or date held per entry), in
    // the unique index's order (no sort): the matcher needs no order but this one, where of two words
    // differing only in ASCII case the upper-case one comes first, as in the listing's order.
    pairs: db.prepare<[string], ReadingPair>(`SELECT word, reading FROM ${t.entries} WHERE ${t.owner} = ? ORDER BY word`),
    version: db.prepare<[string], number>(`SELECT version FROM ${t.versions} WHERE ${t.owner} = ?`).pluck(),
    bump: db.prepare<[string]>(
      `INSERT INTO ${t.versions} (${t.owner}, version) VALUES (?, 1) ON CONFLICT (${t.owner}) DO UPDATE SET version = version + 1`,
    ),
  };
};

const NONE: readonly never[] = Object.freeze([]);

/** One kind of dictionary (entries of type `E`, written by a `B`), its statements prepared once. */
export class KeyedDictionary<E, B> extends Repo<ReturnType<typeof statements>> {
  readonly #options: KeyedDictionaryOptions<E, B>;
  /**
   * The lists read for speech, by owner and version: the same array is returned until the owner's
   * dictionary changes (in any process), so what is compiled per array (src/speech/text/dictionary.ts)
   * is built once per version instead of once per message, while it is kept (DictionaryCache).
   */
  readonly #cache: DictionaryCache;
  readonly #prefix: string;

  constructor(db: Db, clock: Clock | undefined, tables: KeyedDictionaryTables, options: KeyedDictionaryOptions<E, B>) {
    super(db, clock, (d) => statements(d, tables));
    this.#options = options;
    this.#cache = options.cache ?? new DictionaryCache();
    this.#prefix = `${tables.entries}\0`;
  }

  /**
   * Adds the word, or replaces its reading; says which, or (nothing written) 'full' when a new word
   * would pass DICTIONARY_MAX_ENTRIES, 'patterns_full' when a new pattern would pass DICTIONARY_MAX_PATTERNS.
   */
  add(owner: string, word: string, reading: string, by: B): Promise<'added' | 'updated' | 'full' | 'patterns_full'> {
    return this.write(() => {
      const existed = this.sql.exists.get(owner, word) !== undefined;
      if (!existed && (this.sql.count.get(owner) ?? 0) >= DICTIONARY_MAX_ENTRIES) return 'full';
      if (!existed && isPatternWord(word) && (this.sql.patterns.get(owner) ?? 0) >= DICTIONARY_MAX_PATTERNS) return 'patterns_full';
      this.sql.upsert.run(this.#row(owner, word, reading, this.clock.now(), by));
      this.sql.bump.run(owner);
      return existed ? 'updated' : 'added';
    });
  }

  /** Resolves false when the word was not in the owner's dictionary. */
  remove(owner: string, word: string): Promise<boolean> {
    return this.write(() => {
      const removed = this.sql.delete.run(owner, word).changes > 0;
      if (removed) this.sql.bump.run(owner);
      return removed;
    });
  }

  /**
   * Replaces the owner's whole dictionary (`replace`) or adds and updates the given words, keeping
   * the others (`merge`), in one transaction: all of it or nothing. Refused whole (nothing written)
   * when the result would hold more than DICTIONARY_MAX_ENTRIES entries or DICTIONARY_MAX_PATTERNS
   * patterns, counted in that same transaction.
   */
  import(
    owner: string,
    entries: readonly { word: string; reading: string }[],
    mode: 'merge' | 'replace',
    by: B,
  ): Promise<{ ok: true; total: number } | DictionaryFull> {
    return this.write(() => {
      const words = new Set(entries.map((e) => e.word));
      const kept = mode === 'replace' ? 0 : (this.sql.count.get(owner) ?? 0);
      const total = mode === 'replace' ? words.size : kept + [...words].filter((w) => this.sql.exists.get(owner, w) === undefined).length;
      if (total > DICTIONARY_MAX_ENTRIES) return { ok: false as const, kind: 'entries' as const, total, max: DICTIONARY_MAX_ENTRIES };
      const newPatterns = [...words].filter((w) => isPatternWord(w) && (mode === 'replace' || this.sql.exists.get(owner, w) === undefined));
      const patterns = (mode === 'replace' ? 0 : (this.sql.patterns.get(owner) ?? 0)) + newPatterns.length;
      if (patterns > DICTIONARY_MAX_PATTERNS)
        return { ok: false as const, kind: 'patterns' as const, total: patterns, max: DICTIONARY_MAX_PATTERNS };
      if (mode === 'replace') this.sql.deleteAll.run(owner);
      const now = this.clock.now();
      for (const e of entries) this.sql.upsert.run(this.#row(owner, e.word, e.reading, now, by));
      this.sql.bump.run(owner);
      return { ok: true as const, total: this.sql.count.get(owner) ?? 0 };
    });
  }

  /** The owner's entries with who wrote them and when, longest word first (what is listed and exported; read each time). */
  own(owner: string): readonly E[] {
    const { rows, versionedFromStart } = this.#options;
    if (versionedFromStart && this.sql.version.get(owner) === undefined) return NONE; // never had an entry
    return this.sql.list.all(owner).map((row) => rows.fromRow(row));
  }

  /**
   * The owner's words and readings as speech reads them: the same frozen array until their
   * dictionary changes, while the cache keeps it (else read again).
   */
  readable(owner: string): readonly ReadingPair[] {
    const stored = this.sql.version.get(owner);
    if (stored === undefined && this.#options.versionedFromStart) return NONE; // never had an entry: nothing to cache
    const version = stored ?? 0;
    const key = this.#prefix + owner;
    const kept = this.#cache.get(key, version);
    if (kept) return kept;
    const entries = Object.freeze(this.sql.pairs.all(owner));
    this.#cache.set(key, version, entries);
    return entries;
  }

  #row(owner: string, word: string, reading: string, now: number, by: B): object {
    return this.#options.rows.toRow(this.#options.record(owner, word, reading, now, by));
  }
}
