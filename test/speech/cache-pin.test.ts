import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { AudioCache } from '../../src/speech/synthesis/cache.ts';
import { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import type { ReadyUtterance } from '../../src/speech/queue/utterance.ts';
import { createSynthesizer, playableNow, type TtsClientLike } from '../../src/speech/synthesis/synthesize.ts';
import { fakeLedger, msg, sessionOf } from './queue-fakes.ts';
import { FakeClock, SOON } from '../support/clock.ts';

// Cache eviction deleted files a queued utterance was about to play.
let dir: string;
let db: Db;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cache-pin-'));
  db = openDatabase(join(dir, 'bot.sqlite'));
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function pipeline(maxBytes: number) {
  // Each entry: 20 bytes of "MP3" + a 100-byte "Ogg" (the index is what matters here, not ffmpeg).
  const cache = new AudioCache({ db, dir: join(dir, 'audio'), maxBytes, transcode: async () => Buffer.alloc(100, 1) });
  const client: TtsClientLike = {
    speak: async (req) => ({ url: `http://x/${encodeURIComponent(req.text)}.mp3`, pk: 1, text: req.text, substituted: {} }),
    narrate: async () => {
      throw new Error('not used');
    },
    download: async () => Buffer.alloc(20, 0xff),
  };
  return { cache, synth: createSynthesizer({ client, cache, budget: fakeLedger() }) };
}

describe('queued audio is pinned against cache eviction', () => {
  it('GIVEN audio ready and waiting for its turn THEN other guilds filling the cache do not delete its files; after it played they may', async () => {
    const { synth } = pipeline(250); // two entries fit
    const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock(), prefetch: 2, maxInFlight: 2 });
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((r) => (releaseFirst = r));
    const g1: Array<{ text: string; filesThere: boolean; oggPath: string; ready: ReadyUtterance }> = [];
    let g2 = 0;
    q.setDefaultSink(async (r) => {
      if (r.guildId === 'g2') {
        // Counted once its files are cached: that put is what evicts (a miss is delivered first).
        await r.audio!.cached;
        return void g2++;
      }
      // A miss comes back before its files are written (it plays from the MP3 meanwhile); once
      // they are, they must stay until it has played.
      await r.audio!.cached;
      const files = playableNow(r.audio!);
      g1.push({
        text: r.items[0]!.text,
        filesThere: existsSync(files.oggPath!) && existsSync(files.mp3Path!),
        oggPath: files.oggPath!,
        ready: r,
      });
      if (g1.length === 1) await firstHeld;
    });
    q.enqueue(msg('g1', 'a', 'playing now', { kind: 'say' }));
    q.enqueue(msg('g1', 'a', 'next in line', { kind: 'say' }));
    await vi.waitUntil(() => g1.length === 1 && q.stats(sessionOf('g1')).ready === 1, SOON);
    for (const text of ['other 1', 'other 2', 'other 3']) q.enqueue(msg('g2', 'b', text, { kind: 'say' }));
    await vi.waitUntil(() => g2 === 3, SOON);
    releaseFirst();
    await vi.waitUntil(() => g1.length === 2, SOON);
    expect(g1[1]).toMatchObject({ text: 'next in line', filesThere: true });
    // Played: no longer pinned, so the next entry's eviction may take it.
    await vi.waitUntil(() => q.stats(sessionOf('g1')).playing === false, SOON);
    q.enqueue(msg('g2', 'b', 'other 4', { kind: 'say' }));
    q.enqueue(msg('g2', 'b', 'other 5', { kind: 'say' }));
    await vi.waitUntil(() => g2 === 5, SOON);
    expect(existsSync(g1[1]!.oggPath)).toBe(false);
  });

  it('GIVEN two holders of one pin-counted entry THEN it stays until both released', async () => {
    const { cache } = pipeline(120);
    const a = await cache.put('a'.repeat(64), Buffer.alloc(20, 0xff), { pin: true });
    const again = await cache.get('a'.repeat(64), { pin: true });
    await cache.put('b'.repeat(64), Buffer.alloc(20, 0xff));
    expect(existsSync(a.oggPath)).toBe(true);
    a.release!();
    await cache.put('c'.repeat(64), Buffer.alloc(20, 0xff));
    expect(existsSync(a.oggPath)).toBe(true);
    again!.release!();
    await cache.put('d'.repeat(64), Buffer.alloc(20, 0xff));
    expect(existsSync(a.oggPath)).toBe(false);
  });
});
