import { describe, expect, it } from 'vitest';
import { cutAtSpeaking } from '../../src/speech/queue/batching/keeping-up.ts';
import { isRipe, nextBatch } from '../../src/speech/queue/batching/merging.ts';
import { clipRequest, planBatch, type PlanLimits } from '../../src/speech/queue/batching/reuse.ts';
import type { Utterance } from '../../src/speech/queue/utterance.ts';
import { countChars } from '../../src/tts/chars.ts';
import { NOW, RULES, u } from '../support/batching.ts';

// Batches formed when a rate grant is in hand, and clips played from the cache, as pure functions: GIVEN what
// is pending when a grant is in hand THEN what one request carries, what plays from the cache, and what is
// cut at the moment of speaking.

/** An auto message read with its author's name before it. */
const named = (name: string, body: string, extra: Partial<Utterance> = {}) => u(`${name}、${body}`, { prefix: `${name}、`, ...extra });
const nothingCached = () => false;
const limits = (maxRequests: number, maxItems = 10): PlanLimits => ({ maxRequests, reusableChars: 8, maxItems });

describe('planBatch: the batch formed when the grant is in hand', () => {
  it('GIVEN a backlog that built up during the wait and one grant THEN one request carries all of it, up to maxMessages', () => {
    const run = Array.from({ length: 7 }, (_, i) => u(`これは${i}番目の長めのメッセージです`));
    const plan = planBatch(run, nothingCached, limits(1), RULES);
    expect(plan.take).toBe(5);
    expect(plan.requests).toBe(1);
    expect(plan.clips).toHaveLength(1);
  });

  it('GIVEN no grant in hand and nothing cached THEN nothing can be formed yet (a request is needed first)', () => {
    expect(planBatch([u('こんにちは、みなさん元気ですか')], nothingCached, limits(0), RULES).take).toBe(0);
  });

  it('GIVEN every part already cached THEN the batch plays from the cache with no request and no grant', () => {
    const run = [named('たろう', 'おはよう'), named('はなこ', 'おやすみ')];
    const plan = planBatch(run, () => true, limits(0), RULES);
    expect(plan).toMatchObject({ take: 2, requests: 0 });
    expect(plan.clips.every((c) => c.cached)).toBe(true);
  });

  it('GIVEN a cached name and an uncached line, one grant THEN the name plays from the cache and only the line is paid', () => {
    const run = [named('たろう', '今日の晩ごはんは何にしようかな')];
    const plan = planBatch(run, (_u, text) => text === 'たろう、', limits(1), RULES);
    expect(plan.requests).toBe(1);
    expect(plan.clips).toEqual([
      { cached: true, part: { item: 0, part: 'name', text: 'たろう、' } },
      { cached: false, parts: [{ item: 0, part: 'body', text: '今日の晩ごはんは何にしようかな' }] },
    ]);
    const line = plan.clips[1]!;
    if (line.cached) throw new Error('the line was planned as cached');
    const paid = clipRequest('g1', run, line.parts, RULES);
    expect(paid.text).toBe('今日の晩ごはんは何にしようかな');
    expect(paid.charges).toMatchObject([
      { guildId: 'g1', userId: 'a', endpoint: 'standard', chars: countChars('今日の晩ごはんは何にしようかな') },
    ]);
  });

  it('GIVEN grants to spare THEN an uncached name is asked for alone (cached for next time); with one grant it rides in the same request', () => {
    const run = [named('じろう', '明日の天気はどうなるだろうね')];
    const spare = planBatch(run, nothingCached, limits(2), RULES);
    expect(spare.requests).toBe(2);
    expect(spare.clips.map((c) => (c.cached ? c.part.text : c.parts.map((p) => p.text)))).toEqual([
      ['じろう、'],
      ['明日の天気はどうなるだろうね'],
    ]);
    const scarce = planBatch(run, nothingCached, limits(1), RULES);
    expect(scarce.requests).toBe(1);
    expect(scarce.clips).toHaveLength(1);
  });

  it('GIVEN grants to spare and a name that does not keep coming back THEN it rides in the request: a request of its own would not pay', () => {
    const run = [named('さぶろう', 'はじめまして、よろしく')];
    const plan = planBatch(run, nothingCached, { ...limits(2), recurring: () => false }, RULES);
    expect(plan.requests).toBe(1);
    expect(plan.clips).toHaveLength(1);
  });

  it('GIVEN one grant and cached parts between uncached ones THEN the cached ones are read in the request rather than needing a second', () => {
    const run = [named('たろう', '一つ目の長いメッセージです'), named('はなこ', '二つ目の長いメッセージです')];
    const cached = (_u: Utterance, text: string) => text === 'はなこ、';
    const plan = planBatch(run, cached, limits(1), RULES);
    expect(plan).toMatchObject({ take: 2, requests: 1 });
  });
});

describe('isRipe: under pressure a growing run waits for company', () => {
  it('GIVEN a lone fresh auto message THEN it is not ripe until dueMs after it arrived', () => {
    const pending = [u('ひとつ')];
    expect(isRipe(pending, NOW + 9_999, 10_000, RULES)).toBe(false);
    expect(isRipe(pending, NOW + 10_000, 10_000, RULES)).toBe(true);
  });

  it('GIVEN a full run, another voice behind it, or an explicit request THEN it is ripe at once', () => {
    expect(
      isRipe(
        Array.from({ length: 5 }, () => u('x')),
        NOW,
        10_000,
        RULES,
      ),
    ).toBe(true);
    expect(isRipe([u('one'), u('two', { voice: 'ja-JP-Wavenet-D' })], NOW, 10_000, RULES)).toBe(true);
    expect(isRipe([u('say', { kind: 'say' })], NOW, 10_000, RULES)).toBe(true);
  });
});

describe('the staleness cut holds when the batch would speak', () => {
  it('GIVEN a message that is 50 s old and a batch that cannot speak for 15 s THEN it is dropped before anything is paid', () => {
    const pending = [u('old', { enqueuedAt: NOW - 50_000 }), u('fresh')];
    expect(nextBatch(pending, { now: NOW, playing: false, speakAt: NOW + 15_000 }, RULES)).toEqual({ stale: 1, take: 1 });
    expect(nextBatch(pending, { now: NOW, playing: false, speakAt: NOW + 5_000 }, RULES)).toEqual({ stale: 0, take: 2 });
  });

  it('GIVEN clips played back to back THEN an utterance that would start past the cut is dropped with every clip carrying it; /say never', () => {
    const a = u('a', { enqueuedAt: NOW - 55_000 });
    const b = u('b', { enqueuedAt: NOW - 58_000 });
    const s = u('s', { kind: 'say', enqueuedAt: NOW - 120_000 });
    // a starts at NOW (55 s old: kept), b after a's 4 s (62 s old: dropped), s after that (never dropped).
    const { keep, dropped } = cutAtSpeaking(
      [
        { durationMs: 4_000, items: [a] },
        { durationMs: 1_000, items: [b] },
        { durationMs: 2_000, items: [b] },
        { durationMs: 3_000, items: [s] },
      ],
      NOW,
      60_000,
    );
    expect(keep).toEqual([0, 3]);
    expect(dropped).toEqual([b]);
  });

  it('GIVEN one request reading two utterances and the second is past the cut THEN both go (one sound cannot be split)', () => {
    const a = u('a', { enqueuedAt: NOW - 10_000 });
    const b = u('b', { enqueuedAt: NOW - 61_000 });
    const { keep, dropped } = cutAtSpeaking([{ durationMs: 3_000, items: [a, b] }], NOW, 60_000);
    expect(keep).toEqual([]);
    expect(dropped).toHaveLength(2);
    expect(dropped).toEqual(expect.arrayContaining([a, b]));
  });
});
