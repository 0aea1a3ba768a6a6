import { describe, expect, it } from 'vitest';
import { countChars } from '../../src/tts/chars.ts';
import { normaliseMessage, type PlainMessage } from '../../src/speech/text/text.ts';
import { speakableName, joinAnnouncement } from '../../src/speech/text/names.ts';
import { mulberry32 } from '../support/prng.ts';

// Pieces chosen to exercise every rule and their interactions (markup inside markup, unclosed
// delimiters, lone surrogates, private-use characters the pipeline uses internally, long runs).
const PIECES = [
  'あ',
  'ｗ',
  'w',
  'W',
  'x',
  '0',
  ' ',
  '\n',
  '\r',
  '\t',
  '*',
  '**',
  '_',
  '__',
  '~~',
  '|',
  '||',
  '`',
  '```',
  '>',
  '> ',
  '# ',
  '-# ',
  '\\',
  '<',
  '>',
  '@',
  '<@',
  '<@!',
  '<@&',
  '<#',
  '<:',
  '<a:',
  '<t:',
  ':',
  '123',
  '456',
  '</',
  '@everyone',
  '@here',
  'http://',
  'https://',
  'www.',
  'discord.gg/',
  'example.com',
  '/path_x',
  '[',
  ']',
  '(',
  ')',
  '😀',
  '👍🏻',
  '‍',
  '️',
  '🇯',
  '🇵',
  '⃣',
  '𠮷',
  '\uD800',
  '\uDC00',
  '\uE000',
  '\uE001',
  '\u200B',
  '。',
  '、',
  '!',
  '?',
  'ー',
  'a'.repeat(25),
  'ー'.repeat(30),
  '!'.repeat(21),
  '😀'.repeat(20),
  '\u0301'.repeat(10),
];

function randomText(next: () => number): string {
  const n = Math.floor(next() * 40);
  let s = '';
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(next() * PIECES.length)]!;
  return s;
}

const MARKERS = { ja: 1 + countChars('以下略'), en: 2 + countChars('and so on') };

describe('GIVEN thousands of random messages', () => {
  it('THEN normalisation never throws, stays bounded, and never emits a mention, a URL or a 20+ run', () => {
    const seed = 20260101;
    const next = mulberry32(seed);
    for (let i = 0; i < 3000; i++) {
      const lang = next() < 0.5 ? 'ja' : 'en';
      const maxLength = 1 + Math.floor(next() * 120);
      const msg: PlainMessage = {
        content: randomText(next),
        authorId: '123',
        authorName: randomText(next),
        users: { '123': randomText(next), '456': randomText(next) },
        roles: { '123': randomText(next) },
        channels: { '456': randomText(next) },
        attachments: next() < 0.2 ? [{ name: randomText(next), contentType: next() < 0.5 ? 'image/png' : null }] : [],
        stickers: next() < 0.1 ? [{ name: randomText(next) }] : [],
      };
      const dictionary =
        next() < 0.3
          ? [
              { word: 'x', reading: randomText(next) || 'y' },
              { word: 'あ', reading: randomText(next) || 'い' },
            ]
          : [];
      const context = `seed ${seed}, case ${i}: ${JSON.stringify({ msg, lang, maxLength, dictionary })}`;
      const out = normaliseMessage(msg, { lang, maxLength, dictionary });
      if (out === null) continue;
      expect(countChars(out), context).toBeLessThanOrEqual(maxLength + MARKERS[lang]);
      expect(out, context).not.toContain('<@');
      expect(out, context).not.toMatch(/https?:\/\/|discord\.gg\/|@everyone|@here/i);
      expect(out, context).not.toMatch(/(.)\1{19}/su);
      expect(out, context).not.toMatch(/[\uE000-\uF8FF]/); // no internal placeholder leaks
      expect(out, context).toMatch(/[\p{L}\p{N}]/u);
      expect(out, context).toBe(out.trim());
      expect(out.isWellFormed(), context).toBe(true); // no lone surrogate: it cannot be sent as UTF-8
    }
  });

  it('THEN names and announcements are bounded and safe too', () => {
    const next = mulberry32(7);
    for (let i = 0; i < 2000; i++) {
      const name = randomText(next);
      const lang = next() < 0.5 ? 'ja' : 'en';
      const spoken = speakableName(name, lang);
      expect(countChars(spoken)).toBeLessThanOrEqual(20);
      expect(spoken).not.toMatch(/<@|https?:\/\/|(.)\1{19}/su);
      expect(spoken.isWellFormed()).toBe(true);
      expect(joinAnnouncement(name, lang, 'join')).not.toContain('<@');
    }
  });
});
