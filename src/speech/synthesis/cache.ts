import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AudioError } from '../../audio/errors.ts';
import { mp3ToOggOpus } from '../../audio/transcode.ts';
import { probeDurationMs } from '../../audio/mp3-frames.ts';
import { AudioCacheIndex, type AudioCacheEntry } from '../../db/audio-cache.ts';
import type { Db } from '../../db/database.ts';
import type { Endpoint } from '../../billing/ledger.ts';
import { systemClock, type Clock } from '../../util/clock.ts';

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

interface AudioCacheOptions {
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

/**
 * Content-addressed audio: the MP3 from the service and its Ogg Opus, indexed in SQLite. A hit
 * costs no request from the rate budget (ARCHITECTURE: cache hits never touch it). Keys are
 * hashes, so no chat text is stored.
 */
export class AudioCache {
  readonly #dir: string;
  readonly #maxBytes: number;
  readonly #transcode: (mp3: Buffer) => Promise<Buffer>;
  readonly #index: AudioCacheIndex;
  /** Keys whose files someone is about to play, with how many holders (this process only). */
  readonly #pins = new Map<string, number>();

  constructor(options: AudioCacheOptions) {
    this.#dir = options.dir;
    this.#maxBytes = options.maxBytes ?? AUDIO_CACHE_DEFAULTS.maxBytes;
    this.#transcode = options.transcode ?? AUDIO_CACHE_DEFAULTS.transcode;
    this.#index = new AudioCacheIndex(options.db, options.clock ?? AUDIO_CACHE_DEFAULTS.clock);
  }

  /** The cache key of a request: sha256 over a canonical JSON of everything that shapes the audio. */
  static key(input: AudioKeyInput): string {
    const canonical =
      input.endpoint === 'standard'
        ? [KEY_VERSION, 'standard', input.voice, input.speed, input.pitch, input.text]
        : [
            KEY_VERSION,
            'advanced',
            input.voice,
            input.speed,
            input.pitch,
            input.text,
            input.tone ?? null,
            input.model ?? null,
            input.seed ?? null,
          ];
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
    const entry = this.#index.get(key);
    if (!entry) return null;
    const audio = this.#toAudio(entry);
    const present = await Promise.all([
      stat(audio.mp3Path).then(
        () => true,
        () => false,
      ),
      stat(audio.oggPath).then(
        () => true,
        () => false,
      ),
    ]);
    if (!present.every(Boolean)) {
      // Someone deleted files by hand (or another process evicted them): forget the entry.
      await this.#index.remove(key);
      await Promise.all([rm(audio.mp3Path, { force: true }), rm(audio.oggPath, { force: true })]);
      return null;
    }
    await this.#index.touch(key);
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
      // Owner-only: speech made from chat text (DATA_DIR is 0700 as well).
      await mkdir(join(this.#dir, key.slice(0, 2)), { recursive: true, mode: 0o700 });
      await Promise.all([this.#writeAtomic(rel.mp3, mp3), this.#writeAtomic(rel.ogg, ogg)]);
    } catch (cause) {
      throw new AudioError('cache_write_failed', { detail: (cause as NodeJS.ErrnoException).code, cause });
    }
    // Pinned before the index points at it: another put's eviction may run while this one waits.
    const release = info.pin ? this.pin(key) : undefined;
    try {
      // Only now that both files exist may the index point at them.
      await this.#index.put({
        key,
        endpoint: info.endpoint ?? 'standard',
        mp3Path: rel.mp3,
        oggPath: rel.ogg,
        mp3Bytes: mp3.length,
        oggBytes: ogg.length,
        durationMs,
      });
    } catch (error) {
      release?.();
      throw error;
    }
    await this.#evict(key);
    const entry: CachedAudio = {
      key,
      mp3Path: join(this.#dir, rel.mp3),
      oggPath: join(this.#dir, rel.ogg),
      mp3Bytes: mp3.length,
      durationMs,
    };
    return release ? { ...entry, release } : entry;
  }

  async #writeAtomic(rel: string, data: Buffer): Promise<void> {
    const final = join(this.#dir, rel);
    const temp = `${final}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await writeFile(temp, data, { mode: 0o600 });
      await rename(temp, final);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  /** The entry just written is never its own victim, even when it alone exceeds the cap. */
  async #evict(keep: string): Promise<void> {
    // Pinned files are waiting to be played: they may take the cache over its cap for a while.
    const victims = await this.#index.evict(this.#maxBytes, keep, (key) => this.#pins.has(key));
    await Promise.all(
      victims.flatMap((e) => [rm(join(this.#dir, e.mp3Path), { force: true }), rm(join(this.#dir, e.oggPath), { force: true })]),
    );
  }

  #toAudio(entry: AudioCacheEntry): CachedAudio {
    return {
      key: entry.key,
      mp3Path: join(this.#dir, entry.mp3Path),
      oggPath: join(this.#dir, entry.oggPath),
      mp3Bytes: entry.mp3Bytes,
      durationMs: entry.durationMs,
    };
  }
}
