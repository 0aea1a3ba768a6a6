import { afterEach, describe, expect, it } from 'vitest';
import { applyDictionary, misreadCandidates, parseDictionaryWord, type DictionaryEntry } from '../../src/speech/text/dictionary.ts';
import { parseDictionaryFile, serialiseDictionary } from '../../src/speech/text/dictionary-file.ts';
import { normaliseMessage, type PlainMessage } from '../../src/speech/text/text.ts';
import { describeDictionaryProblem } from '../../src/usecases/dictionary-problems.ts';
import { createRepositories } from '../../src/db/repositories.ts';
import { DICTIONARY_MAX_PATTERNS } from '../../src/domain/dictionary-patterns.ts';
import { tempDb } from '../support/temp-db.ts';

// Dictionary entries written r/…/ (as ゆっくりボイス's regular-expression entries): a pattern of the
// safe engine (src/speech/text/safe-pattern.ts) whose matches are read as the reading.

const e = (word: string, reading: string): DictionaryEntry => ({ word, reading });

describe('GIVEN a dictionary with patterns THEN their matches are read as their readings', () => {
  it.each<[string, string, DictionaryEntry[][], string]>([
    ['a pattern', 'ランチは1200円でした', [[e('r/[0-9]+円/', 'いくらか')]], 'ランチはいくらかでした'],
    ['ASCII letters in either case', 'GG ggg g', [[e('r/gg+/', 'グッドゲーム')]], 'グッドゲーム グッドゲーム g'],
    ['every match', '草草 と 草', [[e('r/草+/', 'くさ')]], 'くさ と くさ'],
    // Words first: a word the dictionary names is read as written for it, patterns only elsewhere.
    [
      'a word before a pattern',
      '1200円と30円',
      [[e('1200円', 'せんにひゃくえん'), e('r/[0-9]+円/', 'いくらか')]],
      'せんにひゃくえんといくらか',
    ],
    // A reading is never matched again, neither by a word nor by a pattern.
    ['never inside a reading', 'A B', [[e('A', '100円'), e('r/[0-9]+円/', 'いくらか')]], '100円 B'],
    // Of two layers' patterns matching at one place, the earlier layer's (the server's before a member's).
    ['the earlier layer first', 'ｗｗｗ', [[e('r/w+/', 'わら')], [e('r/w+/', 'だぶりゅー')]], 'わら'],
    // The leftmost match wins, whichever layer.
    ['the leftmost match', 'xy', [[e('r/y/', 'わい')], [e('r/x/', 'えっくす')]], 'えっくすわい'],
  ])('%s', (_why, text, layers, expected) => {
    const normalised = text.normalize('NFKC');
    expect(applyDictionary(normalised, { layers })).toBe(expected);
  });

  it('reads a message with a pattern entry in Japanese and in English', () => {
    const msg = (content: string): PlainMessage => ({
      content,
      authorId: '1',
      authorName: 'A',
      users: {},
      roles: {},
      channels: {},
      attachments: [],
      stickers: [],
    });
    const dictionary = [e('r/\\d{3,4}-\\d{4}/', '電話番号')];
    expect(normaliseMessage(msg('連絡先は090-1234です'), { lang: 'ja', maxLength: 100, dictionary })).toBe('連絡先は電話番号です');
    expect(normaliseMessage(msg('call 555-1234 now'), { lang: 'en', maxLength: 100, dictionary })).toBe('call 電話番号 now');
  });

  it('does not offer to fix a word a pattern already reads', () => {
    expect(misreadCandidates('東京タワーと大阪城', [e('r/大阪./', 'おおさか')])).toEqual(['東京']);
  });
});

describe('GIVEN a pattern entry THEN it is checked as the engine reads it', () => {
  const reason = (word: string, lang: 'ja' | 'en') => {
    const r = parseDictionaryWord(word);
    return r.ok ? `ok: ${r.value}` : describeDictionaryProblem(lang, r.error);
  };
  it.each([
    ['r/(a+)+$/', 'ok: r/(a+)+$/', 'ok: r/(a+)+$/'],
    // Full-width as typed on a Japanese keyboard: one spelling, as message text is read.
    ['ｒ／［０－９］＋円／', 'ok: r/[0-9]+円/', 'ok: r/[0-9]+円/'],
    ['r/(a)\\1/', '後方参照（\\1 など）は使えません（6文字目）。', 'Backreferences (\\1 and the like) are not supported (at character 6).'],
    [
      'r/a(?=b)/',
      '先読み・後読み（(?= など）は使えません（4文字目）。',
      'Lookahead and lookbehind ((?= and the like) are not supported (at character 4).',
    ],
    [
      'r/a*/',
      'パターンが空の文字列にも一致します。1文字以上に一致するようにしてください。',
      'The pattern also matches empty text: make it match at least one character.',
    ],
    ['r/(ab/', 'パターンの書き方が正しくありません（3文字目）。', 'The pattern is not written correctly (at character 3).'],
    [`r/${'a'.repeat(101)}/`, 'パターンは100文字までです。', 'A pattern is at most 100 characters.'],
    // A word of 50 characters or fewer stays a word (r/ alone is not a pattern).
    ['r/', 'ok: r/', 'ok: r/'],
  ])('GIVEN %s THEN ja: %s / en: %s', (word, ja, en) => {
    expect(reason(word, 'ja')).toBe(ja);
    expect(reason(word, 'en')).toBe(en);
  });
});

describe('GIVEN patterns in a dictionary file THEN import and export keep them', () => {
  it('JSON and CSV carry r/…/ entries as written, and read back the same', () => {
    const entries = [e('r/[0-9]+円/', 'いくらか'), e('東京', 'とうきょう'), e('r/=+/', 'イコール')];
    for (const format of ['json', 'csv'] as const) {
      const file = serialiseDictionary(entries, format);
      const back = parseDictionaryFile(`dictionary.${format}`, Buffer.from(file, 'utf8'));
      expect(back.ok && [...back.entries].sort((a, b) => (a.word < b.word ? -1 : 1))).toEqual(
        [...entries].sort((a, b) => (a.word < b.word ? -1 : 1)),
      );
    }
  });

  it('a file with a broken pattern is refused with its line, one with too many patterns as a whole', () => {
    const broken = parseDictionaryFile('d.tsv', Buffer.from('東京\tとうきょう\nr/(a)\\1/\tだめ\n', 'utf8'));
    expect(broken.ok ? [] : broken.rows.map((r) => [r.at, r.identifier, r.context.position])).toEqual([[2, 'pattern.backreference', 6]]);
    const many = Array.from({ length: DICTIONARY_MAX_PATTERNS + 1 }, (_, i) => `r/x${i}/\tえっくす`).join('\n');
    const tooMany = parseDictionaryFile('d.tsv', Buffer.from(many, 'utf8'));
    expect(tooMany.ok ? undefined : tooMany.file).toEqual({
      identifier: 'dictfile.too_many_patterns',
      context: { max: DICTIONARY_MAX_PATTERNS, found: DICTIONARY_MAX_PATTERNS + 1 },
    });
  });
});

describe('GIVEN a stored dictionary THEN patterns are capped apart from words, in the write’s transaction', () => {
  let closeDb: (() => void) | undefined;
  afterEach(() => closeDb?.());
  const repos = () => {
    const t = tempDb();
    closeDb = t.close;
    return createRepositories(t.db);
  };

  it('a server and a member each hold at most DICTIONARY_MAX_PATTERNS patterns; words are still added', async () => {
    const r = repos();
    for (let i = 0; i < DICTIONARY_MAX_PATTERNS; i++) expect(await r.dictionary.add('g1', `r/x${i}/`, 'えっくす', 'u1')).toBe('added');
    expect(await r.dictionary.add('g1', 'r/one-more/', 'もうひとつ', 'u1')).toBe('patterns_full');
    expect(await r.dictionary.add('g1', 'r/x0/', 'かえた', 'u1')).toBe('updated');
    expect(await r.dictionary.add('g1', '東京', 'とうきょう', 'u1')).toBe('added');
    expect(await r.personalDictionary.add('u1', 'r/y/', 'わい')).toBe('added');
    // An import that would pass the cap is refused whole; replacing with fewer is fine.
    expect(await r.dictionary.import('g1', [e('r/new/', 'にゅう')], 'merge', 'u1')).toEqual({
      ok: false,
      kind: 'patterns',
      total: DICTIONARY_MAX_PATTERNS + 1,
      max: DICTIONARY_MAX_PATTERNS,
    });
    expect(r.dictionary.own('g1').some((x) => x.word === 'r/new/')).toBe(false);
    expect(await r.dictionary.import('g1', [e('r/new/', 'にゅう')], 'replace', 'u1')).toEqual({ ok: true, total: 1 });
    // What is read: the pattern, from the cached list.
    expect(applyDictionary('brand new', r.dictionary.list('g1', 'u1'))).toBe('brand にゅう');
  });
});
