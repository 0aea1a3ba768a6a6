import { describe, expect, it } from 'vitest';
import { BotMetrics } from '../../src/ops/metrics.ts';
import { HEALTH_WINDOW_MS, SessionHealth, unhealthy } from '../../src/ops/session-health.ts';
import { parseSamples } from '../support/ops.ts';

// Each voice session's health over the last minutes: the share of its chat heard within 20 s and
// the 95th percentile of the wait, from what was heard and what never was; /metrics sums it up.
const T = 1_000_000;

describe('SessionHealth', () => {
  it('GIVEN heard and missed messages THEN the share heard within 20 s and the p95 wait of those heard, per session', () => {
    const health = new SessionHealth();
    // v1: 19 heard quickly (1..19 s), one after 30 s, one dropped as too old.
    for (let s = 1; s <= 19; s++) health.heard('g', 'v1', s * 1_000, T);
    health.heard('g', 'v1', 30_000, T);
    health.missed('g', 'v1', T);
    health.heard('g', 'v2', 500, T);
    expect(health.of('g', 'v1', T)).toEqual({
      guildId: 'g',
      channelId: 'v1',
      messages: 21,
      heardWithin: 19,
      ratio: 19 / 21,
      p95WaitMs: 19_000,
    });
    expect(health.of('g', 'v2', T)).toMatchObject({ messages: 1, heardWithin: 1, ratio: 1, p95WaitMs: 500 });
    expect(health.of('g', 'none', T)).toMatchObject({ messages: 0, ratio: null, p95WaitMs: null });
    // A message exactly 20 s late counts as within.
    health.heard('g', 'v3', 20_000, T);
    expect(health.of('g', 'v3', T).heardWithin).toBe(1);
  });

  it('GIVEN time passing THEN only the last five minutes count, and a quiet session is forgotten', () => {
    const health = new SessionHealth();
    health.missed('g', 'v1', T);
    health.heard('g', 'v1', 1_000, T + 60_000);
    expect(health.of('g', 'v1', T + HEALTH_WINDOW_MS).messages).toBe(2);
    expect(health.of('g', 'v1', T + HEALTH_WINDOW_MS + 1)).toMatchObject({ messages: 1, ratio: 1 });
    expect(health.all(T + 60_000 + HEALTH_WINDOW_MS + 1)).toEqual([]);
  });

  it('GIVEN few messages THEN a session is not judged; enough and mostly late THEN unhealthy', () => {
    const health = new SessionHealth();
    for (let i = 0; i < 4; i++) health.missed('g', 'few', T);
    for (let i = 0; i < 5; i++) health.missed('g', 'late', T);
    health.heard('g', 'late', 1_000, T);
    expect(unhealthy(health.of('g', 'few', T))).toBe(false);
    expect(unhealthy(health.of('g', 'late', T))).toBe(true);
  });
});

describe('per-session health in /metrics', () => {
  it('GIVEN sessions THEN the worst share, the worst p95 wait and how many are unhealthy; none THEN nothing unheard', async () => {
    const metrics = new BotMetrics({ defaultMetrics: false });
    const health = new SessionHealth();
    let now = T;
    metrics.setSources({ sessionHealth: () => health.all(now) });
    const read = async () => {
      const samples = parseSamples(await metrics.text());
      const of = (name: string) => samples.find((s) => s.name === name)?.value;
      return [
        of('yomiage_voice_session_heard_20s_min_ratio'),
        of('yomiage_voice_session_wait_p95_max_seconds'),
        of('yomiage_voice_sessions_unhealthy'),
      ];
    };
    expect(await read()).toEqual([1, 0, 0]);
    for (let i = 0; i < 4; i++) health.heard('g1', 'good', 2_000, T);
    for (let i = 0; i < 5; i++) health.missed('g2', 'bad', T);
    health.heard('g2', 'bad', 45_000, T);
    expect(await read()).toEqual([0, 45, 1]);
    now = T + HEALTH_WINDOW_MS + 1;
    expect(await read()).toEqual([1, 0, 0]);
  });
});

describe('the metered sink feeds each session its own waits', () => {
  it("GIVEN two calls of one server playing at once THEN the first packet in one marks its own chat heard, not the other's", async () => {
    const { EventEmitter } = await import('node:events');
    const { meteredSink } = await import('../../src/ops/instrument.ts');
    const voice = new EventEmitter<{ clipStarted: [{ guildId: string; channelId: string; ms: number }] }>();
    const health = new SessionHealth();
    let now = T;
    const finish = new Map<string, () => void>();
    const sink = meteredSink((ready) => new Promise((resolve) => finish.set(ready.id, () => resolve({ played: true, attached: false }))), {
      metrics: new BotMetrics({ defaultMetrics: false }),
      voice,
      now: () => now,
      health,
    });
    const ready = (id: string, channelId: string) =>
      ({
        id,
        guildId: 'g',
        items: [
          {
            id,
            guildId: 'g',
            userId: 'u',
            channelId: 'c',
            kind: 'auto',
            text: 't',
            voice: 'v',
            speed: 1,
            pitch: 0,
            audience: `voice:${channelId}`,
            enqueuedAt: T,
          },
        ],
        audio: { fromCache: true },
      }) as never;
    const one = sink(ready('a', 'v1'), new AbortController().signal);
    const two = sink(ready('b', 'v2'), new AbortController().signal);
    now = T + 3_000;
    voice.emit('clipStarted', { guildId: 'g', channelId: 'v2', ms: 5 });
    expect(health.of('g', 'v2', now)).toMatchObject({ messages: 1, p95WaitMs: 3_000 });
    expect(health.of('g', 'v1', now).messages).toBe(0);
    now = T + 7_000;
    voice.emit('clipStarted', { guildId: 'g', channelId: 'v1', ms: 5 });
    finish.get('a')!();
    finish.get('b')!();
    await Promise.all([one, two]);
    expect(health.of('g', 'v1', now)).toMatchObject({ messages: 1, p95WaitMs: 7_000 });
    expect(health.of('g', 'v2', now).messages).toBe(1);
  });
});
