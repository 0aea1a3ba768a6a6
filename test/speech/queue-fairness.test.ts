import { describe, expect, it } from 'vitest';
import { createMemoryLimiter } from '../../src/tts/limiter/fair.ts';
import { SpeechScheduler } from '../../src/speech/queue.ts';
import { createSynthesizer, type AudioCacheLike, type BudgetLike, type TtsClientLike } from '../../src/speech/synthesize.ts';
import { fakeLedger, msg } from './queue-fakes.ts';
import { FakeClock, settle } from '../support/clock.ts';

/** A client that, like the real one, takes a rate grant keyed by guild before each request. */
function limitedClient(limiter: ReturnType<typeof createMemoryLimiter>): TtsClientLike {
  return {
    async speak(req, { key, signal } = {}) {
      await limiter.acquire('standard', { key, signal });
      return { url: `http://audio/${encodeURIComponent(req.text)}.mp3`, pk: 1, text: req.text, substituted: {} };
    },
    narrate: () => Promise.reject(new Error('not used')),
    download: async () => Buffer.from('mp3'),
  };
}

const noCache: AudioCacheLike = {
  get: async () => null,
  put: async (key) => ({ key, mp3Path: '/dev/null', oggPath: '/dev/null', mp3Bytes: 0, durationMs: 1000 }),
};

describe('SpeechScheduler fairness across guilds (real FairRateLimiter)', () => {
  it('GIVEN guild A queues 100 messages, then guild B 5 THEN all of B is served within the first 10 grants', async () => {
    const clock = new FakeClock();
    const grants: string[] = [];
    // A tight budget (2 per window) so everyone waits on the limiter, as under real load.
    const limiter = createMemoryLimiter({
      clock,
      limits: { standard: { limit: 2, windowMs: 60_000 }, advanced: { limit: 1, windowMs: 60_000 } },
      onGrant: (_kind, key) => grants.push(key),
    });
    const budget: BudgetLike = fakeLedger();
    const synth = createSynthesizer({ client: limitedClient(limiter), cache: noCache, budget });
    const q = new SpeechScheduler({ synthesize: synth, clock });
    const spokenB: string[] = [];
    q.setDefaultSink(async (r) => void (r.guildId === 'B' && spokenB.push(...r.items.map((u) => u.text))));

    // Explicit requests are never merged, so each one costs a grant.
    for (let i = 0; i < 100; i++) expect(q.enqueue(msg('A', `a${i % 20}`, `A message ${i}`, { kind: 'say' })).ok).toBe(true);
    for (let i = 0; i < 5; i++) expect(q.enqueue(msg('B', 'b', `B message ${i}`, { kind: 'say' })).ok).toBe(true);

    for (let step = 0; step < 400 && spokenB.length < 5; step++) {
      await clock.advance(1_000);
      await settle(3);
    }
    expect(spokenB).toEqual(['B message 0', 'B message 1', 'B message 2', 'B message 3', 'B message 4']);
    const firstTen = grants.slice(0, 10);
    expect(firstTen.filter((k) => k === 'B')).toHaveLength(5);
    q.close();
  });
});
