import type { Db } from './database.ts';
import { Repo } from './table.ts';
import { rowMapping, type RowOf } from './rows.ts';
import { type Endpoint } from '../billing/ledger.ts';
import type { Clock } from '../util/clock.ts';

/** One cached audio as indexed (migrations/002); paths are relative to the cache directory. */
export interface AudioCacheEntry {
  /** sha256 of everything that shapes the audio (src/speech/synthesis/cache.ts), never the text. */
  key: string;
  endpoint: Endpoint;
  mp3Path: string;
  oggPath: string;
  mp3Bytes: number;
  oggBytes: number;
  durationMs: number;
  createdAt: number;
  lastUsedAt: number;
  hits: number;
}

type Row = RowOf<AudioCacheEntry>;
const rows = rowMapping<AudioCacheEntry, Row>();

const statements = (db: Db) => ({
  get: db.prepare<[string], Row>('SELECT * FROM audio_cache WHERE key = ?'),
  touch: db.prepare<[number, string]>('UPDATE audio_cache SET last_used_at = max(last_used_at, ?), hits = hits + 1 WHERE key = ?'),
  remove: db.prepare<[string]>('DELETE FROM audio_cache WHERE key = ?'),
  upsert: db.prepare<[Omit<Row, 'hits'>]>(`
    INSERT INTO audio_cache (key, endpoint, mp3_path, ogg_path, mp3_bytes, ogg_bytes, duration_ms, created_at, last_used_at, hits)
    VALUES (@key, @endpoint, @mp3_path, @ogg_path, @mp3_bytes, @ogg_bytes, @duration_ms, @created_at, @last_used_at, 0)
    ON CONFLICT (key) DO UPDATE SET mp3_bytes = excluded.mp3_bytes, ogg_bytes = excluded.ogg_bytes,
      duration_ms = excluded.duration_ms, last_used_at = excluded.last_used_at`),
  totals: db.prepare<[], { entries: number; bytes: number | null }>(
    'SELECT COUNT(*) AS entries, SUM(mp3_bytes + ogg_bytes) AS bytes FROM audio_cache',
  ),
  oldest: db.prepare<[string], Row>('SELECT * FROM audio_cache WHERE key != ? ORDER BY last_used_at, created_at'),
});

/**
 * The audio_cache table: the index of the cached files, shared by every process on the host.
 * The files themselves, pins and the eviction policy live in src/speech/synthesis/cache.ts.
 */
export class AudioCacheIndex extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements);
  }

  get(key: string): AudioCacheEntry | undefined {
    const row = this.sql.get.get(key);
    return row ? rows.fromRow(row) : undefined;
  }

  /** Counts a hit and marks the entry used now. */
  async touch(key: string): Promise<void> {
    await this.write(() => this.sql.touch.run(this.#now(), key));
  }

  async remove(key: string): Promise<void> {
    await this.write(() => this.sql.remove.run(key));
  }

  /** Points the index at files that exist (call only once both are written), stamped now. */
  async put(entry: Omit<AudioCacheEntry, 'createdAt' | 'lastUsedAt' | 'hits'>): Promise<void> {
    const now = this.#now();
    const { hits: _hits, ...row } = rows.toRow({ ...entry, createdAt: now, lastUsedAt: now, hits: 0 });
    await this.write(() => this.sql.upsert.run(row));
  }

  /** Entries and bytes (MP3 + Ogg) in the index, all processes together. */
  totals(): { entries: number; bytes: number } {
    const t = this.sql.totals.get()!;
    return { entries: t.entries, bytes: t.bytes ?? 0 };
  }

  /**
   * Removes least recently used entries, never `keep` nor one `spare` says to spare, until the
   * index holds at most `maxBytes`; returns them (their files are the caller's to delete). One
   * transaction, so two processes do not both count the same bytes.
   */
  evict(maxBytes: number, keep: string, spare: (key: string) => boolean): Promise<AudioCacheEntry[]> {
    return this.write(() => {
      let bytes = this.totals().bytes;
      if (bytes <= maxBytes) return [];
      const victims: Row[] = [];
      for (const row of this.sql.oldest.iterate(keep)) {
        if (spare(row.key)) continue;
        victims.push(row);
        bytes -= row.mp3_bytes + row.ogg_bytes;
        if (bytes <= maxBytes) break;
      }
      for (const row of victims) this.sql.remove.run(row.key);
      return victims.map(rows.fromRow);
    });
  }

  /** STRICT INTEGER columns. */
  #now(): number {
    return Math.floor(this.clock.now());
  }
}
