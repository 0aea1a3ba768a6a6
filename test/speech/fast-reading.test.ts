import { describe, expect, it } from 'vitest';
import { fastFactor, fastSpeed, readLimit } from '../../src/speech/text/fast-reading.ts';
import { normaliseMessage, type PlainMessage } from '../../src/speech/text/text.ts';
import type { ReadLang } from '../../src/speech/text/words.ts';
import { countChars } from '../../src/tts/chars.ts';

// Long messages read faster (早口) as pure rules: the speed a message is read at for its length,
// the member's speed and the server's ceiling, and where it is cut. A message past the max length
// is read faster so it takes about as long as the max length would, up to the ceiling; only past
// the ceiling times the max length is it cut with "以下略" / "and so on". Ceiling 1: cut as before.

const msg = (content: string): PlainMessage => ({
  content,
  authorId: '100',
  authorName: 'たろう',
  users: {},
  roles: {},
  channels: {},
  attachments: [],
  stickers: [],
});

/** What a message of `content` becomes, as auto-read makes it: its text and the speed it is asked for. */
function reading(content: string, lang: ReadLang, s: { speed?: number; maxLength: number; ceiling: number }) {
  const text = normaliseMessage(msg(content), { lang, maxLength: readLimit(s.maxLength, s.ceiling) })!;
  return { text, speed: fastSpeed(s.speed ?? 1, countChars(text), s.maxLength, s.ceiling) };
}

describe('the speed-up of a long message', () => {
  it.each([
    // chars, max length, ceiling, factor
    [100, 100, 2, 1], // at the max length: as before
    [50, 100, 2, 1],
    [150, 100, 2, 1.5], // as long as 100 characters would take
    [133, 100, 2, 1.33], // two decimals
    [200, 100, 2, 2],
    [450, 100, 2, 2], // never past the ceiling
    [450, 100, 4, 4],
    [450, 100, 9, 4], // the ceiling itself never past the service's fastest
    [300, 100, 1, 1], // ceiling 1: off
  ])('GIVEN %i characters, max length %i, ceiling %d THEN read %dx faster', (chars, maxLength, ceiling, factor) => {
    expect(fastFactor(chars, maxLength, ceiling)).toBe(factor);
  });

  it("GIVEN the member's own speed THEN the speed-up applies on top of it, never past the service's 4.0", () => {
    expect(fastSpeed(1, 150, 100, 2)).toBe(1.5);
    expect(fastSpeed(1.2, 150, 100, 2)).toBe(1.8);
    expect(fastSpeed(1.5, 200, 100, 2)).toBe(3);
    expect(fastSpeed(3, 200, 100, 2)).toBe(4);
    expect(fastSpeed(0.8, 80, 100, 2)).toBe(0.8); // short: the member's speed as it is
  });

  it('GIVEN a ceiling THEN a message is cut only past the ceiling times the max length', () => {
    expect(readLimit(100, 2)).toBe(200);
    expect(readLimit(100, 1)).toBe(100);
    expect(readLimit(30, 1.25)).toBe(37);
    expect(readLimit(500, 4)).toBe(2000);
  });
});

describe('a long message, in Japanese and in English', () => {
  const ja = (n: number) => 'あいうえおかきくけこ'.repeat(n);

  it('GIVEN 150 Japanese characters, max length 100, ceiling 2 THEN all of it is read, at 1.5x', () => {
    expect(reading(ja(15), 'ja', { maxLength: 100, ceiling: 2 })).toEqual({ text: ja(15), speed: 1.5 });
  });

  it('GIVEN 300 Japanese characters THEN the first 200 are read at 2x, then "以下略"', () => {
    expect(reading(ja(30), 'ja', { maxLength: 100, ceiling: 2 })).toEqual({ text: `${ja(20)}、以下略`, speed: 2 });
  });

  it("GIVEN the ceiling at 1.0 THEN it is cut at the max length and read at the member's speed, as before", () => {
    expect(reading(ja(15), 'ja', { speed: 1.2, maxLength: 100, ceiling: 1 })).toEqual({ text: `${ja(10)}、以下略`, speed: 1.2 });
  });

  it('GIVEN an English message of 60 characters, max length 40, ceiling 2 THEN all of it at 1.5x', () => {
    const text = 'The quick brown fox jumps over the lazy dog again and again!';
    expect(countChars(text)).toBe(60);
    expect(reading(text, 'en', { maxLength: 40, ceiling: 2 })).toEqual({ text, speed: 1.5 });
  });

  it('GIVEN an English message past twice the max length THEN cut there with "and so on", at 2x; at ceiling 1 cut at the max length', () => {
    const text = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen';
    expect(reading(text, 'en', { maxLength: 20, ceiling: 2 })).toEqual({
      text: 'one two three four five six seven eight, and so on',
      speed: 2,
    });
    expect(reading(text, 'en', { maxLength: 20, ceiling: 1 })).toEqual({ text: 'one two three four f, and so on', speed: 1 });
  });
});
