import { describe, expect, it } from 'vitest';
import { admits, batchRequest, mayStartBatch, mergeable, nextBatch, separatorFor } from '../../src/speech/queue/batching/merging.ts';
import { clipParts, clipRequest, planBatch } from '../../src/speech/queue/batching/reuse.ts';
import { NOW, RULES, u } from '../support/batching.ts';

// The batching rules as pure functions: GIVEN a guild's queue THEN the decision.

const idle = { now: NOW, playing: false };
const playing = { now: NOW, playing: true };

describe('nextBatch', () => {
  it('GIVEN an empty queue THEN nothing is taken', () => {
    expect(nextBatch([], idle, RULES)).toEqual({ stale: 0, take: 0 });
  });

  it('GIVEN consecutive auto messages with one voice THEN up to maxMessages share one request', () => {
    const pending = Array.from({ length: 7 }, (_, i) => u(`line ${i}`));
    expect(nextBatch(pending, idle, RULES)).toEqual({ stale: 0, take: 5 });
  });

  it('GIVEN merging would pass maxChars THEN the batch ends before the message that would', () => {
    // 'a'.repeat(95) + '。' + 'b'.repeat(95) = 191 characters; one more message of 9 plus its pause is 201.
    const pending = [u('a'.repeat(95)), u('b'.repeat(95)), u('c'.repeat(9))];
    expect(nextBatch(pending, idle, RULES)).toEqual({ stale: 0, take: 2 });
    expect(nextBatch([u('x'.repeat(300)), u('y')], idle, RULES)).toEqual({ stale: 0, take: 1 });
  });

  it.each([
    ['another voice', { voice: 'ja-JP-Wavenet-D' }],
    ['another speed', { speed: 1.2 }],
    ['another pitch', { pitch: 1 }],
    ['another language', { lang: 'en' }],
    // One request is played at one volume: a member's quieter voice is not merged into a louder one's audio.
    ['another volume', { volume: 0.5 }],
    ['an explicit /say', { kind: 'say' as const }],
    ['an advanced request', { advanced: { voice: 'Ruby' as const } }],
  ])('GIVEN the next message has %s THEN it is not merged: order is kept', (_, extra) => {
    expect(nextBatch([u('one'), u('two', extra), u('three')], idle, RULES)).toEqual({ stale: 0, take: 1 });
  });

  it('GIVEN an explicit request at the head THEN it goes alone, even with auto messages behind it', () => {
    expect(nextBatch([u('say this', { kind: 'say' }), u('auto')], idle, RULES)).toEqual({ stale: 0, take: 1 });
    expect(nextBatch([u('narrate', { kind: 'narrate', advanced: { voice: 'Ruby' } })], playing, RULES)).toEqual({ stale: 0, take: 1 });
  });

  it('GIVEN auto messages older than maxAutoAgeMs at the head THEN they are dropped, and the next fresh ones batched', () => {
    const old = NOW - 60_001;
    const pending = [u('old 1', { enqueuedAt: old }), u('old 2', { enqueuedAt: old }), u('fresh 1'), u('fresh 2')];
    expect(nextBatch(pending, idle, RULES)).toEqual({ stale: 2, take: 2 });
    // Exactly maxAutoAgeMs old is still spoken.
    expect(nextBatch([u('edge', { enqueuedAt: NOW - 60_000 })], idle, RULES)).toEqual({ stale: 0, take: 1 });
  });

  it('GIVEN an old /say at the head THEN it is never dropped, nor the old auto behind it yet', () => {
    const old = NOW - 120_000;
    expect(nextBatch([u('say', { kind: 'say', enqueuedAt: old }), u('auto', { enqueuedAt: old })], idle, RULES)).toEqual({
      stale: 0,
      take: 1,
    });
  });

  it('GIVEN only stale messages THEN all are dropped and nothing is taken', () => {
    expect(nextBatch([u('old', { enqueuedAt: 0 })], idle, RULES)).toEqual({ stale: 1, take: 0 });
  });

  it('GIVEN a lone auto message while the guild plays THEN it is held until holdMs after it arrived', () => {
    expect(nextBatch([u('lone', { enqueuedAt: NOW - 500 })], playing, RULES)).toEqual({ stale: 0, take: 0, holdUntil: NOW + 1_000 });
  });

  it('GIVEN a lone auto message and an idle guild, or its hold over THEN it is taken at once', () => {
    expect(nextBatch([u('lone')], idle, RULES)).toEqual({ stale: 0, take: 1 });
    expect(nextBatch([u('lone', { enqueuedAt: NOW - 1_500 })], playing, RULES)).toEqual({ stale: 0, take: 1 });
  });

  it('GIVEN two auto messages while the guild plays THEN they are merged at once, not held', () => {
    expect(nextBatch([u('one'), u('two')], playing, RULES)).toEqual({ stale: 0, take: 2 });
  });

  it('GIVEN stale messages before a lone fresh one while playing THEN the stale go and the fresh one is held', () => {
    expect(nextBatch([u('old', { enqueuedAt: 0 }), u('fresh')], playing, RULES)).toEqual({ stale: 1, take: 0, holdUntil: NOW + 1_500 });
  });
});

describe('mergeable and separatorFor', () => {
  it('GIVEN the same voice, speed, pitch and language THEN two auto messages may share a request', () => {
    expect(mergeable(u('a'), u('b'))).toBe(true);
    expect(mergeable(u('a'), u('b', { kind: 'say' }))).toBe(false);
    // Volume 1 said or not is the same volume.
    expect(mergeable(u('a'), u('b', { volume: 1 }))).toBe(true);
    expect(mergeable(u('a', { volume: 0.5 }), u('b', { volume: 0.5 }))).toBe(true);
  });

  it.each([
    ['ja', 'こんにちは', '。'],
    ['en', 'hello', '…'],
    [undefined, 'hello', '…'],
    [undefined, 'こんにちは', '。'],
    ['fr', 'bonjour', '。'],
  ])('GIVEN lang %s and text %s THEN the pause is %j', (lang, text, sep) => {
    const utterance = u(text, lang === undefined ? {} : { lang });
    if (lang === undefined) delete utterance.lang;
    expect(separatorFor(utterance, RULES.separator)).toBe(sep);
  });
});

describe('batchRequest', () => {
  it('GIVEN merged messages of several authors THEN one text in order, each author charged their text and the pause before it', () => {
    const req = batchRequest(
      'g1',
      [
        u('hello there', { userId: 'alice', lang: 'en' }),
        u('lol', { userId: 'bob', lang: 'en' }),
        u('ok', { userId: 'alice', lang: 'en' }),
      ],
      RULES,
    );
    expect(req).toMatchObject({
      guildId: 'g1',
      endpoint: 'standard',
      text: 'hello there…lol…ok',
      voice: 'ja-JP-Wavenet-B',
      speed: 1,
      pitch: 0,
    });
    expect(req.charges).toEqual([
      { guildId: 'g1', userId: 'alice', endpoint: 'standard', chars: 11 + 1 + 2, channels: [{ channelId: 'c1', chars: 11 + 1 + 2 }] },
      { guildId: 'g1', userId: 'bob', endpoint: 'standard', chars: 1 + 3, channels: [{ channelId: 'c1', chars: 1 + 3 }] },
    ]);
    expect(req.context).toBeUndefined();
  });

  it('GIVEN a message that already ends a sentence THEN no second mark after it, and nobody pays for one', () => {
    const ja = batchRequest('g1', [u('ナイス！', { userId: 'a' }), u('たろう、やあ', { userId: 'b' }), u('了解', { userId: 'c' })], RULES);
    expect(ja.text).toBe('ナイス！たろう、やあ。了解');
    expect(ja.charges.map((c) => c.chars)).toEqual([4, 6, 1 + 2]);
    const en = batchRequest('g1', [u('thanks!', { userId: 'a', lang: 'en' }), u('ok', { userId: 'b', lang: 'en' })], RULES);
    expect(en.text).toBe('thanks! ok');
    expect(en.charges.map((c) => c.chars)).toEqual([7, 1 + 2]);
  });

  it('GIVEN a merge in any language THEN its pause is one character, the price of a merge, never two', () => {
    for (const lang of ['ja', 'en'] as const) {
      const req = batchRequest('g1', [u('abc', { userId: 'a', lang }), u('def', { userId: 'b', lang })], RULES);
      expect([...req.text].length).toBe(3 + 1 + 3);
    }
    // After a sentence end: nothing more in Japanese, a space between English words.
    expect(batchRequest('g1', [u('ok.', { lang: 'en' }), u('gg', { lang: 'en' })], RULES).text).toBe('ok. gg');
  });

  it("GIVEN one author's two messages side by side in a request THEN the name is read before the first only, and not paid twice", () => {
    const run = [u('たろう、おはよう', { userId: 'a', prefix: 'たろう、' }), u('たろう、げんき？', { userId: 'a', prefix: 'たろう、' })];
    expect(clipParts(run[1]!, 1, run[0]).map((p) => p.text)).toEqual(['げんき？']);
    // Another author before it: the name is read.
    expect(clipParts(run[1]!, 1, u('やあ', { userId: 'b' })).map((p) => p.text)).toEqual(['たろう、', 'げんき？']);
    const plan = planBatch(run, () => false, { maxRequests: 1, reusableChars: 8, maxItems: 5 }, RULES);
    const parts = plan.clips.flatMap((c) => (c.cached ? [c.part] : c.parts));
    const req = clipRequest('g1', run, parts, RULES);
    expect(req.text).toBe('たろう、おはよう。げんき？');
    expect(req.charges.reduce((n, c) => n + c.chars, 0)).toBe([...req.text].length);
  });

  it('GIVEN merged parts (a name apart from its line) THEN the text and the charges count the same pauses', () => {
    const run = [u('草！', { userId: 'a' }), u('はなこ、おはよう', { userId: 'b', prefix: 'はなこ、' }), u('了解', { userId: 'c' })];
    const parts = [
      { item: 0, part: 'all' as const, text: '草！' },
      { item: 1, part: 'name' as const, text: 'はなこ、' },
      { item: 1, part: 'body' as const, text: 'おはよう' },
      { item: 2, part: 'all' as const, text: '了解' },
    ];
    const req = clipRequest('g1', run, parts, RULES);
    expect(req.text).toBe('草！はなこ、おはよう。了解');
    expect(req.charges.reduce((n, c) => n + c.chars, 0)).toBe([...req.text].length);
  });

  it('GIVEN an explicit advanced request THEN the advanced endpoint, its parameters and who asked', () => {
    const item = u('読んで', {
      kind: 'narrate',
      userId: 'carol',
      channelId: 'c9',
      advanced: { voice: 'Ruby', seed: 3 },
      meta: { reply: 1 },
    });
    const req = batchRequest('g1', [item], RULES);
    expect(req).toMatchObject({
      endpoint: 'advanced',
      advanced: { voice: 'Ruby', seed: 3 },
      charges: [{ userId: 'carol', endpoint: 'advanced', chars: 3 }],
    });
    expect(req.context).toEqual({ utteranceId: item.id, userId: 'carol', channelId: 'c9', meta: { reply: 1 } });
  });
});

describe('mayStartBatch and admits', () => {
  it.each([
    [{ synthesizing: 0, ready: 0 }, true],
    [{ synthesizing: 1, ready: 0 }, false],
    [{ synthesizing: 0, ready: 1 }, true],
    [{ synthesizing: 0, ready: 2 }, false],
  ])('GIVEN %j with prefetch 2 and one in flight THEN start: %s', (batches, expected) => {
    expect(mayStartBatch(batches, { prefetch: 2, maxInFlight: 1 })).toBe(expected);
  });

  it('GIVEN a member with nothing waiting THEN any length is admitted; otherwise up to the cap', () => {
    expect(admits(0, 900, 500)).toBe(true);
    expect(admits(400, 100, 500)).toBe(true);
    expect(admits(400, 101, 500)).toBe(false);
  });
});
