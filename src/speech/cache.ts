import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AudioError } from '../audio/errors.ts';
import { mp3ToOggOpus, probeDurationMs } from '../audio/transcode.ts';
import type { Db } from '../db/database.ts';
import type { Endpoint } from '../db/repositories.ts';
import { writeTx } from '../db/write.ts';
import { systemClock, type Clock } from '../util/clock.ts';


/** Everything that shapes the audio of one request (spec: standard / advanced request bodies). */
export interface AudioKeyInput {
  endpoint: Endpoint;
  voice: string;
  speed: number;
  pitch: number;
  text: string;
  tone?: string;
  model?: string;
  seed?: number;
}

export interface CachedAudio {
  key: string;
  /** Absolute path of the MP3 as the service sent it (for attachments). */
  mp3Path: string;
  /** Absolute path of the 48 kHz stereo Ogg Opus made from it (for StreamType.OggOpus). */
  oggPath: string;
  mp3Bytes: number;
  durationMs: number;
  /** With `pin: true`: lets eviction delete these files again (idempotent). */
  release?: () => void;
}

export interface AudioCacheStats {
  entries: number;
  bytes: number;
  /** Hits and misses of this process since start. */
  hits: number;
  misses: number;
}

export interface AudioCacheOptions {
  /** A database migrated to at least 002 (table audio_cache). */
  db: Db;
  /** The cache directory (under DATA_DIR); created when missing. */
  dir: string;
  /** Cap on MP3 + Ogg bytes together; least recently used entries go first. */
  maxBytes?: number;
  clock?: Clock;
  transcode?: (mp3: Buffer) => Promise<Buffer>;
}

/** Defaults; `maxBytes` is the documented CACHE_MAX_MB (src/config.ts reads it from here). */
export const AUDIO_CACHE_DEFAULTS = {
  maxBytes: 256 * 1024 * 1024,
  clock: systemClock,
  transcode: (mp3: Buffer) => mp3ToOggOpus(mp3),
} as const satisfies Required<Omit<AudioCacheOptions, 'db' | 'dir'>>;

/** Bump when the key's recipe changes, so old entries can never be mistaken for new ones. */
const KEY_VERSION = 1;
const KEY_PATTERN = /^[0-9a-f]{64}$/;

/**
 * Whether the same input is known to give the same audio. Standard: yes (the service serves the
 * same file for the same text and voice, spec: What the service does #6). Advanced is generative:
 * only a fixed seed pins the voice, so only then.
 */
export function isCacheable(input: AudioKeyInput): boolean {
  if (input.endpoint === 'standard') return true;
  return typeof input.seed === 'number' && Number.isInteger(input.seed);
}

interface Row {
  key: string;
  endpoint: Endpoint;
  mp3_path: string;
  ogg_path: string;
  mp3_bytes: number;
  ogg_bytes: number;
  duration_ms: number;
  created_at: number;
  last_used_at: number;
  hits: number;
}

/**
 * Content-addressed audio: the MP3 from the service and its Ogg Opus, indexed in SQLite. A hit
 * costs no request from the rate budget (ARCHITECTURE: cache hits never touch it). Keys are
 * hashes, so no chat text is stored.
 */
export class AudioCache {
  readonly #dir: string;
  readonly #maxBytes: number;
  readonly #clock: Clock;
  readonly #transcode: (mp3: Buffer) => Promise<Buffer>;
  readonly #db: Db;
  readonly #stmt;
  readonly #evictBatch;
  #hits = 0;
  #misses = 0;
  /** Keys whose files someone is about to play, with how many holders (this process only). */
  readonly #pins = new Map<string, number>();

  constructor(options: AudioCacheOptions) {
    const { db } = options;
    this.#db = db;
    this.#dir = options.dir;
    this.#maxBytes = options.maxBytes ?? AUDIO_CACHE_DEFAULTS.maxBytes;
    this.#clock = options.clock ?? AUDIO_CACHE_DEFAULTS.clock;
    this.#transcode = options.transcode ?? AUDIO_CACHE_DEFAULTS.transcode;
    this.#stmt = {
      get: db.prepare<[string], Row>('SELECT * FROM audio_cache WHERE key = ?'),
      touch: db.prepare('UPDATE audio_cache SET last_used_at = max(last_used_at, ?), hits = hits + 1 WHERE key = ?'),
      remove: db.prepare('DELETE FROM audio_cache WHERE key = ?'),
      upsert: db.prepare(`INSERT INTO audio_cache
          (key, endpoint, mp3_path, ogg_path, mp3_bytes, ogg_bytes, duration_ms, created_at, last_used_at, hits)
          VALUES (@key, @endpoint, @mp3_path, @ogg_path, @mp3_bytes, @ogg_bytes, @duration_ms, @created_at, @last_used_at, 0)
        ON CONFLICT (key) DO UPDATE SET mp3_bytes = excluded.mp3_bytes, ogg_bytes = excluded.ogg_bytes,
          duration_ms = excluded.duration_ms, last_used_at = excluded.last_used_at`),
      totals: db.prepare<[], { entries: number; bytes: number | null }>(
        'SELECT COUNT(*) AS entries, SUM(mp3_bytes + ogg_bytes) AS bytes FROM audio_cache',
      ),
      oldest: db.prepare<[string], Row>('SELECT * FROM audio_cache WHERE key != ? ORDER BY last_used_at, created_at'),
    };
    // Choose and delete victims in one transaction, so two processes do not both count the same bytes.
    this.#evictBatch = (keep: string): Row[] => {
      const victims: Row[] = [];
      let bytes = this.#stmt.totals.get()!.bytes ?? 0;
      if (bytes <= this.#maxBytes) return victims;
      const candidates: Row[] = [];
      for (const row of this.#stmt.oldest.iterate(keep)) {
        // Pinned files are waiting to be played: they may take the cache over its cap for a while.
        if (this.#pins.has(row.key)) continue;
        candidates.push(row);
        bytes -= row.mp3_bytes + row.ogg_bytes;
        if (bytes <= this.#maxBytes) break;
      }
      for (const row of candidates) {
        this.#stmt.remove.run(row.key);
        victims.push(row);
      }
      return victims;
    };
  }

  /** The cache key of a request: sha256 over a canonical JSON of everything that shapes the audio. */
  static key(input: AudioKeyInput): string {
    const canonical =
      input.endpoint === 'standard'
        ? [KEY_VERSION, 'standard', input.voice, input.speed, input.pitch, input.text]
        : [KEY_VERSION, 'advanced', input.voice, input.speed, input.pitch, input.text, input.tone ?? null, input.model ?? null, input.seed ?? null];
    return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
  }

  /**
   * Keeps eviction (by this process) away from `key`'s files until the returned function is
   * called; pins are counted, so every holder releases its own.
   */
  pin(key: string): () => void {
    this.#pins.set(key, (this.#pins.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#pins.get(key) ?? 1) - 1;
      if (left > 0) this.#pins.set(key, left);
      else this.#pins.delete(key);
    };
  }

  /** The cached audio for `key`, or null; a hit marks it recently used (and with `pin`, pins it). */
  async get(key: string, options: { pin?: boolean } = {}): Promise<CachedAudio | null> {
    if (!KEY_PATTERN.test(key)) throw new AudioError('cache_bad_key');
    const row = this.#stmt.get.get(key);
    if (!row) {
      this.#misses++;
      return null;
    }
    const audio = this.#toAudio(row);
    const present = await Promise.all([stat(audio.mp3Path).then(() => true, () => false), stat(audio.oggPath).then(() => true, () => false)]);
    if (!present.every(Boolean)) {
      // Someone deleted files by hand (or another process evicted them): forget the entry.
      await writeTx(this.#db, () => this.#stmt.remove.run(key));
      await Promise.all([rm(audio.mp3Path, { force: true }), rm(audio.oggPath, { force: true })]);
      this.#misses++;
      return null;
    }
    await writeTx(this.#db, () => this.#stmt.touch.run(Math.floor(this.#clock.now()), key));
    this.#hits++;
    return options.pin ? { ...audio, release: this.pin(key) } : audio;
  }

  /**
   * Stores the MP3 and its Ogg Opus (transcoded once, here), then evicts least recently used
   * entries until the cache fits `maxBytes`. `endpoint` is recorded for stats only.
   */
  async put(key: string, mp3: Buffer, info: { endpoint?: Endpoint; pin?: boolean } = {}): Promise<CachedAudio> {
    if (!KEY_PATTERN.test(key)) throw new AudioError('cache_bad_key');
    const ogg = await this.#transcode(mp3);
    const durationMs = probeDurationMs(mp3);
    const rel = { mp3: join(key.slice(0, 2), `${key}.mp3`), ogg: join(key.slice(0, 2), `${key}.ogg`) };
    try {
      await mkdir(join(this.#dir, key.slice(0, 2)), { recursive: true });
      await Promise.all([this.#writeAtomic(rel.mp3, mp3), this.#writeAtomic(rel.ogg, ogg)]);
    } catch (cause) {
      throw new AudioError('cache_write_failed', { detail: (cause as NodeJS.ErrnoException).code, cause });
    }
    const now = Math.floor(this.#clock.now()); // STRICT INTEGER columns
    // Only now that both files exist may the index point at them.
    const row = {
      key,
      endpoint: info.endpoint ?? 'standard',
      mp3_path: rel.mp3,
      ogg_path: rel.ogg,
      mp3_bytes: mp3.length,
      ogg_bytes: ogg.length,
      duration_ms: durationMs,
      created_at: now,
      last_used_at: now,
    };
    // Pinned before the index points at it: another put's eviction may run while this one waits.
    const release = info.pin ? this.pin(key) : undefined;
    try {
      await writeTx(this.#db, () => this.#stmt.upsert.run(row));
    } catch (error) {
      release?.();
      throw error;
    }
    await this.#evict(key);
    const entry: CachedAudio = { key, mp3Path: join(this.#dir, rel.mp3), oggPath: join(this.#dir, rel.ogg), mp3Bytes: mp3.length, durationMs };
    return release ? { ...entry, release } : entry;
  }

  /** Entries and bytes in the index (all processes), hits and misses of this process. */
  stats(): AudioCacheStats {
    const totals = this.#stmt.totals.get()!;
    return { entries: totals.entries, bytes: totals.bytes ?? 0, hits: this.#hits, misses: this.#misses };
  }

  async #writeAtomic(rel: string, data: Buffer): Promise<void> {
    const final = join(this.#dir, rel);
    const temp = `${final}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await writeFile(temp, data);
      await rename(temp, final);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  /** The entry just written is never its own victim, even when it alone exceeds the cap. */
  async #evict(keep: string): Promise<void> {
    const victims = await writeTx(this.#db, () => this.#evictBatch(keep));
    await Promise.all(victims.flatMap((row) => [rm(join(this.#dir, row.mp3_path), { force: true }), rm(join(this.#dir, row.ogg_path), { force: true })]));
  }

  #toAudio(row: Row): CachedAudio {
    return {
      key: row.key,
      mp3Path: join(this.#dir, row.mp3_path),
      oggPath: join(this.#dir, row.ogg_path),
      mp3Bytes: row.mp3_bytes,
      durationMs: row.duration_ms,
    };
  }
}
