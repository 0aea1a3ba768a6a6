import { describe, expect, it, vi } from 'vitest';
import { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import type { ReadyUtterance, Utterance } from '../../src/speech/queue/utterance.ts';
import type { ReadyAudio, SynthesisRequest } from '../../src/speech/synthesis/synthesize.ts';
import { createMemoryLimiter } from '../../src/tts/limiter/fair.ts';
import type { GrantingLimiter, RateGrant } from '../../src/tts/limiter/limiter.ts';
import { FakeClock, settle, SOON } from '../support/clock.ts';
import { FakeSynth, msg, sessionOf } from './queue-fakes.ts';

// The scheduler with the real limiter, on a manual clock. The batch is formed once the
// grant is in hand, and the staleness cut is applied before anything is paid for it.

// One request per 30 s: a wait for the grant that stays within the 60 s staleness cut.
const ONE_PER_30S = { standard: { limit: 1, windowMs: 30_000 }, advanced: { limit: 1, windowMs: 30_000 } };

function setup() {
  const clock = new FakeClock();
  const limiter = createMemoryLimiter({ clock, limits: ONE_PER_30S, safety: { marginMs: 0 }, pacing: false });
  const synth = new FakeSynth();
  const q = new SpeechScheduler({ synthesize: synth, clock, limiter, coalesce: { pressureHoldMs: 0 } });
  const spoken: ReadyUtterance[] = [];
  const dropped: Utterance[] = [];
  q.on('dropped', ({ items }) => dropped.push(...items));
  q.setDefaultSink(async (r) => {
    spoken.push(r);
  });
  return { clock, limiter, synth, q, spoken, dropped };
}

describe('SpeechScheduler with the rate limiter (batch at the grant)', () => {
  it('GIVEN the window is spent THEN everything that arrives during the wait rides in the one request made when the grant comes', async () => {
    const { clock, limiter, synth, q, spoken } = setup();
    await limiter.acquire('standard', { key: 'another guild' }); // the window's only request is gone
    q.enqueue(msg('g1', 'a', 'いちばん'));
    await settle(10);
    q.enqueue(msg('g1', 'b', 'にばん'));
    q.enqueue(msg('g1', 'a', 'さんばん'));
    await settle(10);
    expect(synth.calls).toHaveLength(0); // nothing sent before the grant
    await clock.advance(30_001);
    await vi.waitUntil(() => spoken.length > 0, SOON);
    expect(synth.calls.map((c) => c.req.text)).toEqual(['いちばん。にばん。さんばん']);
    expect(spoken.flatMap((r) => r.items.map((u) => u.text))).toEqual(['いちばん', 'にばん', 'さんばん']);
    q.close();
  });

  it('GIVEN the wait for a grant outlasts the staleness cut THEN the auto message is dropped and counted, and nothing is paid for it', async () => {
    const { clock, limiter, synth, q, spoken, dropped } = setup();
    limiter.block('standard', 70_000); // the service said: nothing for 70 s
    q.enqueue(msg('g1', 'a', 'おそすぎる'));
    const say = q.enqueue(msg('g1', 'b', 'これは読む', { kind: 'say' }));
    expect(say.ok).toBe(true);
    await settle(10);
    await clock.advance(70_001);
    await vi.waitUntil(() => spoken.length > 0, SOON);
    expect(dropped.map((u) => u.text)).toEqual(['おそすぎる']);
    expect(q.stats(sessionOf('g1')).dropped).toBe(1);
    // Only the /say was sent (it is never dropped): the late auto-read cost nothing.
    expect(synth.calls.map((c) => c.req.text)).toEqual(['これは読む']);
    q.close();
  });
});

describe('SpeechScheduler while requests are scarce', () => {
  /** A limiter under pressure that records who asked and never grants on its own. */
  function scarceLimiter() {
    const asked: string[] = [];
    const limiter: GrantingLimiter = {
      acquire: async () => {},
      block: () => {},
      reserve: (_kind, options) => {
        asked.push(options?.key ?? '');
        return new Promise<RateGrant>(() => {});
      },
      tryReserve: async () => null,
      pressured: () => true,
    };
    return { limiter, asked };
  }

  it('GIVEN a message whose audio is cached THEN it plays at once; an uncached one waits for company before asking for a grant', async () => {
    const clock = new FakeClock();
    const { limiter, asked } = scarceLimiter();
    const synth = Object.assign(new FakeSynth(), {
      lookup: async (req: SynthesisRequest): Promise<ReadyAudio | null> =>
        req.text === 'おはよう' ? { mp3: Buffer.from('hit'), durationMs: 500, fromCache: true, key: 'hit' } : null,
    });
    const q = new SpeechScheduler({ synthesize: synth, clock, limiter, coalesce: { pressureHoldMs: 10_000 } });
    const spoken: string[] = [];
    q.setDefaultSink(async (r) => {
      spoken.push(...r.items.map((u) => u.text));
    });
    q.enqueue(msg('g1', 'a', 'おはよう'));
    await vi.waitUntil(() => spoken.length > 0, SOON);
    expect(spoken).toEqual(['おはよう']);
    expect(synth.calls).toHaveLength(0);
    q.enqueue(msg('g1', 'a', 'きょうはなにするの'));
    await settle(20);
    expect(asked).toEqual([]); // held for company: no grant asked for yet
    await clock.advance(10_000);
    await vi.waitUntil(() => asked.length > 0, SOON);
    expect(asked).toEqual([sessionOf('g1')]);
    q.close();
  });

  it('GIVEN a message held for company THEN it waits for an event (a message, its hold expiring): the cache is not asked in a loop', async () => {
    const clock = new FakeClock();
    const { limiter, asked } = scarceLimiter();
    let lookups = 0;
    const synth = Object.assign(new FakeSynth(), {
      lookup: async (): Promise<ReadyAudio | null> => {
        lookups++;
        return null;
      },
    });
    const q = new SpeechScheduler({ synthesize: synth, clock, limiter, coalesce: { pressureHoldMs: 10_000 } });
    q.enqueue(msg('g1', 'a', 'だれかいる'));
    // Many turns of the event loop while it is held: a polling scheduler looks the part up on each.
    await settle(200);
    expect(asked).toEqual([]);
    expect(lookups).toBeLessThanOrEqual(2);
    // A message arriving is an event: the run is looked at again (its new part looked up), still held.
    q.enqueue(msg('g1', 'b', 'いるよ'));
    await settle(200);
    expect(asked).toEqual([]);
    expect(lookups).toBeLessThanOrEqual(5);
    // The hold expiring is another: the grant is asked for once.
    await clock.advance(10_000);
    await vi.waitUntil(() => asked.length > 0, SOON);
    expect(asked).toEqual([sessionOf('g1')]);
    q.close();
  });
});
