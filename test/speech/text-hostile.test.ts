import { describe, expect, it } from 'vitest';
import { normaliseMessage, type PlainMessage } from '../../src/speech/text/text.ts';
import { type ReadLang } from '../../src/speech/text/words.ts';
import { mulberry32 } from '../support/prng.ts';

// Inputs other read-aloud bots' clean-up tests and Discord markdown parsers trip on: navigation
// mentions with a hyphenated name, links typed without a scheme, code spans with edge spaces, repeated
// custom emoji, the full-width tilde. Ids are made up; shapes follow Discord's message formatting
// reference (discord.com/developers/docs/reference#message-formatting).
function msg(content: string): PlainMessage {
  return { content, authorId: '1', authorName: 'A', users: {}, roles: {}, channels: {}, attachments: [], stickers: [] };
}
const read = (content: string, lang: ReadLang = 'ja') => normaliseMessage(msg(content), { lang, maxLength: 200 });

describe('GIVEN hostile message text THEN no id, query string or markup symbol is spoken', () => {
  it.each([
    // Guild navigation with a hyphenated name, with or without an id: nothing to say.
    ['<id:linked-roles> を見て', 'ja', 'を見て'],
    ['<id:linked-roles:123456789012345678> 見て', 'ja', '見て'],
    ['see <id:linked-roles:123456789012345678>', 'en', 'see'],
    // A soundboard sound: nothing to say either.
    ['<sound:123456789012345678:223456789012345678> おっ', 'ja', 'おっ'],
    // Invite and video links typed without a scheme, with ids and query strings.
    ['discord.gg/abcd?event=123456789012345678 来て', 'ja', '招待リンク 来て'],
    ['youtu.be/dQw4w9WgXcQ?t=42 見て', 'ja', 'URL省略 見て'],
    ['youtube.com/watch?v=dQw4w9WgXcQ&list=PL123 見て', 'ja', 'URL省略 見て'],
    ['m.youtube.com/watch?v=abc123 これ', 'ja', 'URL省略 これ'],
    ['check youtu.be/dQw4w9WgXcQ?t=42 now', 'en', 'check a link now'],
    ['x.com/someone/status/1234567890123456789?s=20 見て', 'ja', 'URL省略 見て'],
    ['discord.com/channels/123456789012345678/223456789012345678 ここ', 'ja', 'URL省略 ここ'],
    ['bit.ly/3abcDEF 短縮', 'ja', 'URL省略 短縮'],
    ['steam://run/730 起動', 'ja', 'URL省略 起動'],
    ['動画はyoutu.be/abc?t=1 です', 'ja', '動画はURL省略 です'], // the link ends where Discord's does: at a space
    // A code span ending (or starting) in a space does not glue to the word beside it.
    ['`npm test `して', 'ja', 'npm test して'],
    ['run `npm ci `now', 'en', 'run npm ci now'],
    ['これ` ls`で', 'ja', 'これ lsで'],
    // A repeated custom emoji is read once, as a repeated Unicode emoji is; different ones stay apart.
    ['<:pepe:123><:pepe:123><:pepe:123> 笑', 'ja', 'pepe 笑'],
    ['<:pepe:123> <:pepe:123>  <:pepe:123> 笑', 'ja', 'pepe 笑'],
    ['<a:dance:999><a:dance:999>', 'en', 'dance'],
    ['<:pepe:1><:kek:2>', 'ja', 'pepe kek'],
    // The full-width tilde is a drawn-out sound or a range, never the ASCII "~" symbol.
    ['すごい～', 'ja', 'すごい〜'],
    ['1～3人', 'ja', '1〜3人'],
  ] as const)('%j (%s) -> %j', (content, lang, expected) => {
    expect(read(content, lang)).toBe(expected);
  });

  it.each([
    // What is not a link stays as written: a file name, a library, a bare domain, a path.
    ['test.js を見て', 'test.js を見て'],
    ['node.js 最高', 'node.js 最高'],
    ['example.com いいよ', 'example.com いいよ'],
    ['src/index.ts を直した', 'src/index.ts を直した'],
    ['3.5/10 点', '3.5/10 点'],
  ] as const)('GIVEN %j THEN it is read as written (%j)', (content, expected) => {
    expect(read(content)).toBe(expected);
  });
});

// Fragments that carry ids, queries or markup, mixed at random into Japanese and English chat.
const FRAGMENTS = [
  'youtu.be/dQw4w9WgXcQ?t=42',
  'youtube.com/watch?v=dQw4w9WgXcQ',
  'discord.gg/abcd?event=123456789012345678',
  'discord.com/channels/123456789012345678/223456789012345678',
  'x.com/a/status/1234567890123456789?s=20',
  '<id:linked-roles>',
  '<id:linked-roles:123456789012345678>',
  '<id:customize>',
  '<sound:123456789012345678:223456789012345678>',
  '<:pepe:123456789012345678>',
  '<a:dance:123456789012345678>',
  '`a `',
  '～',
  'すごい',
  'hello',
  ' ',
  '、',
];

describe('GIVEN 2,000 messages mixing links, navigation mentions, emoji and tildes', () => {
  it('THEN no snowflake, query string, angle bracket, ASCII tilde or "/" of a link is ever spoken', () => {
    const next = mulberry32(39_05);
    for (let i = 0; i < 2000; i++) {
      let content = '';
      const n = 1 + Math.floor(next() * 8);
      for (let j = 0; j < n; j++) content += FRAGMENTS[Math.floor(next() * FRAGMENTS.length)]!;
      const lang: ReadLang = next() < 0.5 ? 'ja' : 'en';
      const out = read(content, lang);
      if (out === null) continue;
      const context = JSON.stringify({ content, lang, out });
      expect(out, context).not.toMatch(/\d{6,}|[?=&<>~/]/);
      expect(out, context).not.toMatch(/pepe\s*pepe|dance\s*dance/); // one run of one emoji, one name
    }
  });

  it('THEN a pathological domain-like run is matched in linear time', () => {
    const hostile = `${'a.'.repeat(4000)}a${'-'.repeat(60)} ${'a1-'.repeat(3000)}`;
    const started = performance.now();
    read(hostile);
    // A backtracking blow-up takes seconds; the linear scan a few milliseconds. Generous for a slow CI.
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
