import { describe, expect, it } from 'vitest';
import {
  applyDictionary,
  DICTIONARY_LIMITS,
  dictionaryCompilations,
  misreadCandidates,
  parseDictionaryEntry,
  parseDictionaryWord,
  parseReading,
  type DictionaryEntry,
} from '../../src/speech/text/dictionary.ts';
import { describeDictionaryProblem } from '../../src/usecases/dictionary-problems.ts';
import { mulberry32 } from '../support/prng.ts';

describe('applyDictionary', () => {
  it.each<[string, string, DictionaryEntry[], string]>([
    [
      'longest match first',
      '東京都庁に行く',
      [
        { word: '東京', reading: 'とうきょう' },
        { word: '東京都庁', reading: 'とちょう' },
      ],
      'とちょうに行く',
    ],
    [
      'a replacement is never replaced again',
      'a b',
      [
        { word: 'a', reading: 'b' },
        { word: 'b', reading: 'c' },
      ],
      'b c',
    ],
    [
      '... also when readings are adjacent',
      'あい',
      [
        { word: 'あ', reading: 'い' },
        { word: 'い', reading: 'う' },
      ],
      'いう',
    ],
    [
      'readings containing other words stay',
      'VC',
      [
        { word: 'VC', reading: 'ボイスチャットVC' },
        { word: 'ボイス', reading: 'X' },
      ],
      'ボイスチャットVC',
    ],
    [
      'ASCII words are case-insensitive',
      'Discord DISCORD discord',
      [{ word: 'discord', reading: 'ディスコード' }],
      'ディスコード ディスコード ディスコード',
    ],
    ['non-ASCII letters compare exactly', 'Ärger ärger', [{ word: 'ärger', reading: 'X' }], 'Ärger X'],
    ['ASCII words do not match inside longer ASCII words', 'on done online on', [{ word: 'on', reading: 'オン' }], 'オン done online オン'],
    ['ASCII words match next to Japanese', '今日はdiscordやる', [{ word: 'discord', reading: 'ディスコード' }], '今日はディスコードやる'],
    ['Japanese words match anywhere', '草生える', [{ word: '草', reading: 'くさ' }], 'くさ生える'],
    [
      'the first of two equal words wins',
      'ok',
      [
        { word: 'OK', reading: 'オーケー' },
        { word: 'ok', reading: 'おけ' },
      ],
      'オーケー',
    ],
    ['surrogate pairs are kept whole', '𠮷野家', [{ word: '野家', reading: 'のや' }], '𠮷のや'],
    ['emoji words', 'すし🍣', [{ word: '🍣', reading: 'すし' }], 'すしすし'],
    ['empty words are ignored', 'abc', [{ word: '', reading: 'X' }], 'abc'],
    ['no entries', 'abc', [], 'abc'],
  ])('GIVEN %s THEN %j becomes the expected text', (_what, text, entries, expected) => {
    expect(applyDictionary(text, entries)).toBe(expected);
  });

  it('GIVEN a thousand entries and a long text THEN it stays a single linear pass', () => {
    const entries = Array.from({ length: 1000 }, (_, i) => ({ word: `w${i}x`, reading: `r${i}` }));
    const text = Array.from({ length: 500 }, (_, i) => `w${i}x`).join(' ');
    const out = applyDictionary(text, entries);
    expect(out.split(' ')).toEqual(Array.from({ length: 500 }, (_, i) => `r${i}`));
  });
});

describe('parseDictionaryWord', () => {
  it.each([
    ['  ＶＣ  ', 'VC'], // trimmed and NFKC, like the message text it is matched against
    ['ｶﾀｶﾅ', 'カタカナ'],
    ['🍣', '🍣'],
    ['a'.repeat(DICTIONARY_LIMITS.wordMaxChars), 'a'.repeat(DICTIONARY_LIMITS.wordMaxChars)],
  ])('GIVEN %j THEN it is accepted as %j', (input, value) => {
    expect(parseDictionaryWord(input)).toEqual({ ok: true, value });
  });

  it.each([
    ['', 'dictionary.word_empty'],
    ['   ', 'dictionary.word_empty'],
    ['a'.repeat(DICTIONARY_LIMITS.wordMaxChars + 1), 'dictionary.word_too_long'],
    ['<@123>', 'dictionary.word_mention'],
    ['<#123>', 'dictionary.word_mention'],
    ['@everyone', 'dictionary.word_mention'],
    ['a\nb', 'dictionary.word_invalid_character'],
    ['a\u200Bb', 'dictionary.word_invalid_character'],
    ['a\uE000b', 'dictionary.word_invalid_character'],
    ['a\uD800b', 'dictionary.word_invalid_character'],
  ])('GIVEN %j THEN it is refused with %s', (input, identifier) => {
    const r = parseDictionaryWord(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.identifier).toBe(identifier);
  });

  it('GIVEN a too-long word THEN the error carries the limit and the length for the message', () => {
    const r = parseDictionaryWord('𠮷'.repeat(51));
    expect(r).toEqual({ ok: false, error: { identifier: 'dictionary.word_too_long', context: { max: 50, length: 51 } } });
  });
});

describe('parseReading', () => {
  it.each([
    ['ディスコード', 'ディスコード'],
    [' ぶいしー ', 'ぶいしー'],
  ])('GIVEN %j THEN it is accepted as %j', (input, value) => {
    expect(parseReading(input)).toEqual({ ok: true, value });
  });

  it.each([
    ['', 'dictionary.reading_empty'],
    ['あ'.repeat(DICTIONARY_LIMITS.readingMaxChars + 1), 'dictionary.reading_too_long'],
    ['<@123>', 'dictionary.reading_mention'],
    ['<@&123>', 'dictionary.reading_mention'],
    ['@here', 'dictionary.reading_mention'],
    ['https://example.com', 'dictionary.reading_url'],
    ['ｈｔｔｐｓ：／／example.com', 'dictionary.reading_url'], // full-width does not sneak past
    ['discord.gg/abc', 'dictionary.reading_url'],
    ['a\tb', 'dictionary.reading_invalid_character'],
  ])('GIVEN %j THEN it is refused with %s', (input, identifier) => {
    const r = parseReading(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.identifier).toBe(identifier);
  });
});

describe('parseDictionaryEntry', () => {
  it('GIVEN a valid pair THEN both halves are normalised', () => {
    expect(parseDictionaryEntry(' ＯＫ ', ' おけ ')).toEqual({ ok: true, value: { word: 'OK', reading: 'おけ' } });
  });

  it('GIVEN both halves invalid THEN the word error is reported first', () => {
    const r = parseDictionaryEntry('', '');
    expect(!r.ok && r.error.identifier).toBe('dictionary.word_empty');
  });

  it.each<[string, string, string, string]>([
    ['', 'x', '語句が空です。', 'The word is empty.'],
    ['a'.repeat(51), 'x', '語句は50文字までです。', 'The word can be at most 50 characters.'],
    ['<@1>', 'x', '語句にメンションは使えません。', 'The word cannot contain a mention.'],
    ['a\nb', 'x', '語句に改行や制御文字は使えません。', 'The word cannot contain line breaks or control characters.'],
    ['a', ' ', '読み方が空です。', 'The reading is empty.'],
    ['a', 'あ'.repeat(101), '読み方は100文字までです。', 'The reading can be at most 100 characters.'],
    ['a', '@here', '読み方にメンションは使えません。', 'The reading cannot contain a mention.'],
    ['a', 'https://x.example', '読み方にURLは使えません。', 'The reading cannot contain a URL.'],
    ['a', 'a\tb', '読み方に改行や制御文字は使えません。', 'The reading cannot contain line breaks or control characters.'],
  ])('GIVEN word %j and reading %j THEN the member reads why, in Japanese and in English', (word, reading, ja, en) => {
    const r = parseDictionaryEntry(word, reading);
    if (r.ok) throw new Error('expected a rejection');
    expect([describeDictionaryProblem('ja', r.error), describeDictionaryProblem('en', r.error)]).toEqual([ja, en]);
  });
});

describe('misreadCandidates', () => {
  it.each<[string, string, DictionaryEntry[], string[]]>([
    [
      'GIVEN kanji runs and Latin words THEN longest first, each once',
      '明日は御徒町でGitHub、明日もGitHub',
      [],
      ['GitHub', '御徒町', '明日'],
    ],
    [
      'GIVEN a word the dictionary covers THEN it is not offered',
      '東京都庁と新宿区',
      [{ word: '東京都庁', reading: 'とちょう' }],
      ['新宿区'],
    ],
    ['GIVEN one Latin letter, a mention, an emoji, a URL THEN none offered', 'a <@123> <:smile:456> https://example.com/漢字', [], []],
    ['GIVEN full-width Latin THEN offered as the dictionary would match it (NFKC)', 'ＧＰＵ', [], ['GPU']],
  ])('%s', (_, text, entries, expected) => {
    expect(misreadCandidates(text, entries)).toEqual(expected);
  });

  it('GIVEN more words than fields THEN at most `max`, and none longer than `maxChars`', () => {
    expect(misreadCandidates('一 二二 三三三 四四四四 五五五五五 六六六六六六', [], 5, 5)).toEqual([
      '五五五五五',
      '四四四四',
      '三三三',
      '二二',
      '一',
    ]);
  });
});

describe('layered dictionaries (a server, a member, the operator), each compiled once', () => {
  const server = [{ word: 'GPU', reading: 'グラフィックス' }];
  const member = [
    { word: 'gpu', reading: 'ジーピーユー' },
    { word: 'GPUs', reading: 'ジーピーユーズ' },
    { word: 'ねこ', reading: 'にゃんこ' },
  ];
  const operator = [
    { word: 'ねこ', reading: 'キャット' },
    { word: 'yomiage', reading: 'よみあげ' },
  ];

  it.each<[string, string, string]>([
    ['GIVEN a word the server and a member both define THEN the server’s reading (ASCII case-blind)', 'the gpu', 'the グラフィックス'],
    ['GIVEN a longer word in a later layer THEN the longest match still wins', 'two GPUs', 'two ジーピーユーズ'],
    ['GIVEN a word the member and the operator define THEN the member’s', 'ねこ', 'にゃんこ'],
    ['GIVEN a word only the operator defines THEN the operator’s', 'yomiage です', 'よみあげ です'],
  ])('%s', (_, text, expected) => {
    expect(applyDictionary(text, { layers: [server, member, operator] })).toBe(expected);
  });

  it('GIVEN random layers THEN the same text as one list merged the old way (earlier layer wins a word, longest first)', () => {
    const random = mulberry32(39);
    const letters = ['a', 'A', 'b', 'B', 'ab', '東', '京', 'あ', '1', ' '];
    const pick = () => letters[Math.floor(random() * letters.length)]!;
    const word = () =>
      Array.from({ length: 1 + Math.floor(random() * 4) }, pick)
        .join('')
        .trim() || 'a';
    for (let round = 0; round < 300; round++) {
      const layers = [0, 1, 2].map((l) =>
        Array.from({ length: Math.floor(random() * 6) }, (_, i) => ({ word: word(), reading: `<${l}.${i}>` })),
      );
      const seen = new Set<string>();
      const merged = layers
        .flat()
        .filter((e) => {
          const key = e.word.toLowerCase();
          return seen.has(key) ? false : (seen.add(key), true);
        })
        .sort((x, y) => [...y.word].length - [...x.word].length);
      const text = Array.from({ length: 12 }, pick).join('');
      expect(applyDictionary(text, { layers }), JSON.stringify({ text, layers })).toBe(applyDictionary(text, merged));
    }
  });

  it('GIVEN the same lists THEN compiled once: reading messages and offering words to fix (each click) compile nothing more', () => {
    const layers = { layers: [server, member, operator] };
    applyDictionary('GPU', layers);
    const compiled = dictionaryCompilations();
    for (let click = 0; click < 5; click++) expect(misreadCandidates('新しいGPUとねこと東京', layers)).toEqual(['東京', '新']);
    applyDictionary('GPU ねこ', layers);
    applyDictionary('GPU', server);
    expect(dictionaryCompilations()).toBe(compiled);
  });
});
