import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { AudioCacheIndex } from '../../src/db/audio-cache.ts';
import { AudioCache, isCacheable, type AudioKeyInput } from '../../src/speech/synthesis/cache.ts';
import { ffmpegPath } from '@yomiage/media';
import { FakeClock } from '../support/clock.ts';

let dir: string;
let db: Db;
let clock: FakeClock;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'audio-cache-'));
  db = openDatabase(join(dir, 'bot.sqlite'));
  clock = new FakeClock();
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const standard: AudioKeyInput = { endpoint: 'standard', voice: 'ja-JP-Wavenet-B', speed: 1, pitch: 0, text: 'こんにちは' };
const keyOf = (text: string) => AudioCache.key({ ...standard, text });
/** What the index holds, as every process sees it. */
const indexed = () => new AudioCacheIndex(db).totals();

/** A stand-in transcoder for tests about the index: an "Ogg" of a fixed size. */
const fakeTranscode = (size: number) => async (mp3: Buffer) => Buffer.concat([Buffer.from('OggS'), Buffer.alloc(size - 4, mp3[0] ?? 0)]);

describe('AudioCache keys', () => {
  it('the same input gives the same key; any field that shapes the audio changes it', () => {
    const base = AudioCache.key(standard);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    expect(AudioCache.key({ ...standard })).toBe(base);
    for (const change of [
      { voice: 'ja-JP-Wavenet-C' },
      { speed: 1.1 },
      { pitch: 1 },
      { text: 'こんばんは' },
      { endpoint: 'advanced' as const, seed: 1 },
    ]) {
      expect(AudioCache.key({ ...standard, ...change })).not.toBe(base);
    }
    const advanced: AudioKeyInput = {
      endpoint: 'advanced',
      voice: 'Ruby',
      speed: 1,
      pitch: 0,
      text: 'おはようございます。',
      seed: 42,
      model: 'flash',
    };
    expect(AudioCache.key({ ...advanced, tone: 'calm' })).not.toBe(AudioCache.key(advanced));
    expect(AudioCache.key({ ...advanced, model: 'pro' })).not.toBe(AudioCache.key(advanced));
    expect(AudioCache.key({ ...advanced, seed: 43 })).not.toBe(AudioCache.key(advanced));
  });

  it('advanced audio is cacheable only with a fixed seed; standard always', () => {
    expect(isCacheable(standard)).toBe(true);
    expect(isCacheable({ ...standard, endpoint: 'advanced' })).toBe(false);
    expect(isCacheable({ ...standard, endpoint: 'advanced', seed: 7 })).toBe(true);
    expect(isCacheable({ ...standard, endpoint: 'advanced', seed: 0.5 })).toBe(false);
  });
});

describe('AudioCache with ffmpeg', () => {
  it('put then get returns the same MP3 bytes and a valid Ogg Opus, and survives a restart', async () => {
    const source = join(dir, 'speech.mp3');
    // Fixture: a 2 s tone at 24 kHz mono 160 kbit/s, the service's advanced format (as the service documents it).
    execFileSync(ffmpegPath(), [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=2',
      '-ar',
      '24000',
      '-ac',
      '1',
      '-b:a',
      '160k',
      source,
    ]);
    const mp3 = readFileSync(source);
    const cache = new AudioCache({ db, dir: join(dir, 'cache'), maxBytes: 10_000_000, clock });
    const key = AudioCache.key(standard);
    expect(await cache.get(key)).toBeNull();

    const stored = await cache.put(key, mp3);
    expect(Math.abs(stored.durationMs - 2000)).toBeLessThanOrEqual(60);

    const again = new AudioCache({ db, dir: join(dir, 'cache'), clock }); // a restarted process
    const hit = await again.get(key);
    expect(hit).not.toBeNull();
    expect(readFileSync(hit!.mp3Path).equals(mp3)).toBe(true);
    expect(hit!.mp3Bytes).toBe(mp3.length);
    const ogg = readFileSync(hit!.oggPath);
    expect(ogg.subarray(0, 4).toString('latin1')).toBe('OggS');
    expect(ogg.includes('OpusHead')).toBe(true);
    expect(hit!.durationMs).toBe(stored.durationMs);
    // No temp files are left behind, and no chat text is in any file name.
    const files = readdirSync(join(dir, 'cache'), { recursive: true }).map(String);
    expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(files.join('\n')).not.toContain('こんにちは');
    expect(indexed()).toEqual({ entries: 1, bytes: mp3.length + ogg.length });
    // The restarted process's hit is counted in the shared index (the first get was a miss).
    expect(new AudioCacheIndex(db).get(key)).toMatchObject({ hits: 1, mp3Bytes: mp3.length, oggBytes: ogg.length });
  });
});

describe('AudioCache index', () => {
  it('evicts the least recently used entries to stay under the byte cap', async () => {
    // Each entry: 1 000 MP3 bytes + 1 000 Ogg bytes; the cap holds three.
    const cache = new AudioCache({ db, dir: join(dir, 'cache'), maxBytes: 6_500, clock, transcode: fakeTranscode(1_000) });
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(keyOf) as [string, string, string, string];
    const bPut = await cache.put(b, Buffer.alloc(1_000, 2));
    await clock.advance(1_000);
    await cache.put(a, Buffer.alloc(1_000, 1));
    await clock.advance(1_000);
    await cache.put(c, Buffer.alloc(1_000, 3));
    await clock.advance(1_000);
    expect(await cache.get(b)).not.toBeNull(); // b was put first but used last: a is now the oldest
    await clock.advance(1_000);
    await cache.put(d, Buffer.alloc(1_000, 4));

    expect(indexed()).toEqual({ entries: 3, bytes: 6_000 });
    expect(await cache.get(a)).toBeNull();
    expect(await cache.get(b)).not.toBeNull();
    expect(await cache.get(c)).not.toBeNull();
    expect(await cache.get(d)).not.toBeNull();
    expect(existsSync(bPut.oggPath)).toBe(true);
    expect(
      readdirSync(join(dir, 'cache'), { recursive: true })
        .map(String)
        .filter((f) => f.includes(a)),
    ).toEqual([]);
  });

  it('keeps the entry just written even when it alone exceeds the cap', async () => {
    const cache = new AudioCache({ db, dir: join(dir, 'cache'), maxBytes: 1_500, clock, transcode: fakeTranscode(1_000) });
    await cache.put(keyOf('old'), Buffer.alloc(1_000));
    await clock.advance(1);
    const big = await cache.put(keyOf('new'), Buffer.alloc(1_000));
    expect(existsSync(big.oggPath)).toBe(true);
    expect(await cache.get(keyOf('old'))).toBeNull();
    expect(indexed().entries).toBe(1);
  });

  it('treats a file deleted from disk as a miss and forgets the entry', async () => {
    const cache = new AudioCache({ db, dir: join(dir, 'cache'), clock, transcode: fakeTranscode(100) });
    const key = keyOf('gone');
    const stored = await cache.put(key, Buffer.alloc(100));
    unlinkSync(stored.oggPath);
    expect(await cache.get(key)).toBeNull();
    expect(indexed().entries).toBe(0);
    expect(existsSync(stored.mp3Path)).toBe(false);
  });

  it('writes nothing to the index when transcoding fails', async () => {
    const cache = new AudioCache({
      db,
      dir: join(dir, 'cache'),
      clock,
      transcode: async () => {
        throw new Error('ffmpeg exploded');
      },
    });
    await expect(cache.put(keyOf('x'), Buffer.alloc(10))).rejects.toThrow('ffmpeg exploded');
    expect(indexed().entries).toBe(0);
  });

  it('refuses keys that are not sha256 hex (they become file names)', async () => {
    const cache = new AudioCache({ db, dir: join(dir, 'cache'), clock, transcode: fakeTranscode(100) });
    await expect(cache.put('../../etc/passwd', Buffer.alloc(1))).rejects.toMatchObject({ code: 'cache_bad_key' });
    await expect(cache.get('ABC')).rejects.toMatchObject({ code: 'cache_bad_key' });
  });
});
