import { describe, expect, it, vi } from 'vitest';
import { createMemoryLimiter } from '../../src/tts/limiter/fair.ts';
import { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import { type ReadyUtterance, voiceAudience } from '../../src/speech/queue/utterance.ts';
import { createSynthesizer, type AudioCacheLike, type BudgetLike, type TtsClientLike } from '../../src/speech/synthesis/synthesize.ts';
import { FakeSynth, fakeLedger, msg, sessionOf } from './queue-fakes.ts';
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

/** A tight budget (2 per window) so everyone waits on the limiter, as under real load; `grants` lists who got each, in order. */
function tightBudget() {
  const clock = new FakeClock();
  const grants: string[] = [];
  const limiter = createMemoryLimiter({
    clock,
    limits: { standard: { limit: 2, windowMs: 60_000 }, advanced: { limit: 1, windowMs: 60_000 } },
    onGrant: (_kind, key) => grants.push(key),
  });
  return { clock, grants, limiter };
}

describe('SpeechScheduler fairness across guilds (real FairRateLimiter)', () => {
  it('GIVEN guild A queues 100 messages, then guild B 5 THEN all of B is served within the first 10 grants', async () => {
    const { clock, grants, limiter } = tightBudget();
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
    expect(firstTen.filter((k) => k === sessionOf('B'))).toHaveLength(5);
    q.close();
  });
});

describe('SpeechScheduler: two voice channels of one guild are two audiences', () => {
  const upstairs = voiceAudience('vc-upstairs');
  const downstairs = voiceAudience('vc-downstairs');

  it('GIVEN one channel queues 100 requests, then another of its guild 5 THEN all 5 are served within the first 10 grants', async () => {
    const { clock, grants, limiter } = tightBudget();
    const synth = createSynthesizer({ client: limitedClient(limiter), cache: noCache, budget: fakeLedger() });
    const q = new SpeechScheduler({ synthesize: synth, clock });
    const heardDownstairs: string[] = [];
    q.setDefaultSink(async (r) => void (r.items[0]!.audience === downstairs && heardDownstairs.push(...r.items.map((u) => u.text))));

    for (let i = 0; i < 100; i++) q.enqueue(msg('G', `u${i % 20}`, `上の階 ${i}`, { kind: 'say', audience: upstairs }));
    for (let i = 0; i < 5; i++) q.enqueue(msg('G', 'd', `下の階 ${i}`, { kind: 'say', audience: downstairs }));

    for (let step = 0; step < 400 && heardDownstairs.length < 5; step++) {
      await clock.advance(1_000);
      await settle(3);
    }
    expect(heardDownstairs).toEqual(['下の階 0', '下の階 1', '下の階 2', '下の階 3', '下の階 4']);
    expect(grants.slice(0, 10).filter((k) => k === downstairs)).toHaveLength(5);
    // Each channel's queue and counters are its own; the guild's member cap is not.
    expect(q.stats(downstairs)).toMatchObject({ guildId: 'G', audience: downstairs, delivered: 5 });
    q.close();
  });

  it("GIVEN two channels' lines arriving interleaved THEN each channel reads its own lines merged, never the other's", async () => {
    const synth = new FakeSynth();
    const q = new SpeechScheduler({ synthesize: synth, coalesce: { holdMs: 0 } });
    const delivered: ReadyUtterance[] = [];
    q.setDefaultSink(async (r) => void delivered.push(r));
    for (const [text, audience] of [
      ['上の一', upstairs],
      ['下の一', downstairs],
      ['上の二', upstairs],
      ['下の二', downstairs],
    ] as const)
      q.enqueue(msg('G', 'a', text, { audience }));
    await vi.waitUntil(() => delivered.length === 2, { timeout: 2_000 });
    expect(synth.calls.map((c) => c.req.text).sort()).toEqual(['上の一。上の二', '下の一。下の二']);
    for (const r of delivered) expect(new Set(r.items.map((u) => u.audience)).size).toBe(1);
    q.close();
  });
});
