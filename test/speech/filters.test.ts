import { afterEach, describe, expect, it } from 'vitest';
import { applyFilters } from '../../src/speech/text/filter.ts';
import { FILTERED, normaliseFiltered, type PlainMessage } from '../../src/speech/text/text.ts';
import { speakableName } from '../../src/speech/text/names.ts';
import type { FilterEntry } from '../../src/domain/filters.ts';
import { FILTER_LIMITS } from '../../src/domain/filters.ts';
import { createRepositories } from '../../src/db/repositories.ts';
import { addFilter, filtersOf, removeFilter, setFloodLimit } from '../../src/usecases/filters.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { t } from '../../src/i18n/texts.ts';
import type { Actor } from '../../src/domain/audit.ts';
import { tempDb } from '../support/temp-db.ts';

// Filters against 荒らし: what a server never wants read. A 'skip' filter keeps a whole message from
// being read; a 'replace' filter reads each match as another word. Applied to what is written and
// again to what the dictionary makes of it, so neither a zero-width space nor a reading smuggles a
// filtered word through.

const skip = (word: string): FilterEntry => ({ word, action: 'skip', reading: '' });
const replace = (word: string, reading = 'ピー'): FilterEntry => ({ word, action: 'replace', reading });
const msg = (content: string, authorName = 'A'): PlainMessage => ({
  content,
  authorId: '1',
  authorName,
  users: {},
  roles: {},
  channels: {},
  attachments: [],
  stickers: [],
});

describe('GIVEN filters THEN what is read', () => {
  it.each<[string, string, FilterEntry[], string | 'skipped']>([
    ['a word replaced', 'あいつはバカだ', [replace('バカ')], 'あいつはピーだ'],
    ['every match replaced', 'バカバカしいバカ', [replace('バカ')], 'ピーピーしいピー'],
    ['a pattern replaced', 'しねええ死ねねね', [replace('r/(?:死|し)ね+/')], 'ピーええピー'],
    ['a whole message skipped', 'お前なんか死ねばいい', [skip('死ね')], 'skipped'],
    ['a skip pattern', 'spaaaam here', [skip('r/spa+m/')], 'skipped'],
    // ASCII words match whole and in either case: "Ass" is filtered, "class" is not (the Scunthorpe problem).
    ['an ASCII word, whole', 'class Ass', [replace('ass', 'beep')], 'class beep'],
    ['skip wins over replace', 'バカ死ね', [replace('バカ'), skip('死ね')], 'skipped'],
    ['the longer filter first', 'バカヤロー', [replace('バカ'), replace('バカヤロー', 'ブー')], 'ブー'],
    ['nothing matched', 'こんにちは', [skip('死ね')], 'こんにちは'],
  ])('%s', (_why, text, filters, expected) => {
    const r = applyFilters(text, filters);
    expect(r.skipped ? 'skipped' : r.text).toBe(expected);
  });

  it('a message: matched in what is written and in what the dictionary makes of it, in Japanese and in English', () => {
    const read = (
      content: string,
      filters: FilterEntry[],
      lang: 'ja' | 'en' = 'ja',
      dictionary: { word: string; reading: string }[] = [],
    ) => normaliseFiltered(msg(content), { lang, maxLength: 200, filters, dictionary });
    expect(read('あいつはバカだ', [replace('バカ')])).toBe('あいつはピーだ');
    expect(read('you are a spammer, spam', [replace('spam', 'beep')], 'en')).toBe('you are a spammer, beep');
    expect(read('お前なんか死ねばいい', [skip('死ね')])).toBe(FILTERED);
    // A zero-width space inside the word does not hide it; nor full-width letters (one spelling).
    expect(read('死\u200bね', [skip('死ね')])).toBe(FILTERED);
    expect(read('ＳＰＡＭ', [skip('spam')], 'en')).toBe(FILTERED);
    // A dictionary reading cannot bring a filtered word back.
    expect(read('あれ', [skip('死ね')], 'ja', [{ word: 'あれ', reading: '死ね' }])).toBe(FILTERED);
    expect(read('あれ', [replace('バカ')], 'ja', [{ word: 'あれ', reading: 'バカ' }])).toBe('ピー');
    // Whatever else a message holds is read as before.
    expect(read('普通の発言', [skip('死ね')])).toBe('普通の発言');
  });

  it('a name a skip filter matches is not spoken; a replace filter reads it as its word', () => {
    expect(speakableName('死ね太郎', 'ja', [], 20, [skip('死ね')])).toBe('');
    expect(speakableName('バカ太郎', 'ja', [], 20, [replace('バカ')])).toBe('ピー太郎');
    expect(speakableName('Alice', 'en', [], 20, [skip('spam')])).toBe('Alice');
  });

  it('a hostile pattern filter costs linear time on a long message', () => {
    const started = performance.now();
    const r = applyFilters(`${'a'.repeat(10_000)}!`, [skip('r/(a+)+$/'), replace('r/(a|aa)+b/')]);
    expect(r.skipped).toBe(false);
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('GIVEN an admin changing the filters THEN the use case checks, stores and records', () => {
  let close: (() => void) | undefined;
  afterEach(() => close?.());
  const setup = () => {
    const d = tempDb();
    close = d.close;
    return { repos: createRepositories(d.db) };
  };
  const admin: Actor = { userId: 'u1', name: 'Bob', via: 'command' };
  const refusal = async (work: Promise<unknown>, lang: 'ja' | 'en') => {
    const error = await work.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(error instanceof UserError)) throw new Error(`not refused: ${String(error)}`);
    return t(lang, error.code, error.vars);
  };

  it('adds, lists (longest first), removes; a replace filter reads the server’s default word when none is given', async () => {
    const ctx = setup();
    expect(await addFilter(ctx, 'g1', admin, 'ja', { word: 'バカ' })).toEqual({ word: 'バカ', action: 'replace', reading: 'ピー' });
    await ctx.repos.guildSettings.update('g1', { locale: 'en' });
    expect(await addFilter(ctx, 'g1', admin, 'en', { word: 'r/spa+m/', action: 'replace' })).toEqual({
      word: 'r/spa+m/',
      action: 'replace',
      reading: 'beep',
    });
    expect(await addFilter(ctx, 'g1', admin, 'en', { word: '死ね', action: 'skip', reading: 'ignored' })).toEqual(skip('死ね'));
    expect(filtersOf(ctx, 'g1').entries.map((e) => e.word)).toEqual(['r/spa+m/', 'バカ', '死ね']);
    // What messages read follows at once (the list's version changed).
    expect(applyFilters('spaaam バカ', ctx.repos.filters.readable('g1'))).toEqual({ skipped: false, text: 'beep ピー' });
    expect(await removeFilter(ctx, 'g1', admin, ' バカ ')).toBe('バカ');
    expect(applyFilters('バカ', ctx.repos.filters.readable('g1'))).toEqual({ skipped: false, text: 'バカ' });
    expect(ctx.repos.audit.recent('g1').map((e) => e.action)).toEqual(['filter.remove', 'filter.add', 'filter.add', 'filter.add']);
  });

  it('refuses bad input in the member’s language, writing nothing', async () => {
    const ctx = setup();
    const cases: [(lang: 'ja' | 'en') => Promise<unknown>, string, string][] = [
      [
        (lang) => addFilter(ctx, 'g1', admin, lang, { word: 'r/(a)\\1/' }),
        'フィルターに追加できません: 後方参照（\\1 など）は使えません（6文字目）。',
        'This filter cannot be added: Backreferences (\\1 and the like) are not supported (at character 6).',
      ],
      [
        (lang) => addFilter(ctx, 'g1', admin, lang, { word: '   ' }),
        'フィルターに追加できません: 語句が空です。',
        'This filter cannot be added: The word is empty.',
      ],
      [
        (lang) => addFilter(ctx, 'g1', admin, lang, { word: 'x', action: 'delete' }),
        '「delete」は選べません。「語句を置き換える」か「メッセージを読まない」を選んでください。何も変更していません。',
        '“delete” is not a choice: choose replace the word or skip the message. Nothing was changed.',
      ],
      [
        (lang) => addFilter(ctx, 'g1', admin, lang, { word: 'x', reading: 'あ'.repeat(21) }),
        '置き換える語は20文字までです。何も変更していません。',
        'The replacement is at most 20 characters. Nothing was changed.',
      ],
      [
        (lang) => addFilter(ctx, 'g1', admin, lang, { word: 'x', reading: 'https://example.com/' }),
        'フィルターに追加できません: 読み方にURLは使えません。',
        'This filter cannot be added: The reading cannot contain a URL.',
      ],
      [
        () => setFloodLimit(ctx, 'g1', admin, 1),
        '連投の上限は2〜30件（0で上限なし）で指定してください。何も変更していません。',
        'Give the flood limit as 2 to 30 messages (0 for no limit). Nothing was changed.',
      ],
      [
        () => removeFilter(ctx, 'g1', admin, 'ない'),
        '「ない」はフィルターにありません。何も変更していません。',
        '“ない” is not a filter. Nothing was changed.',
      ],
    ];
    for (const [work, ja, en] of cases) {
      expect(await refusal(work('ja'), 'ja')).toBe(ja);
      expect(await refusal(work('en'), 'en')).toBe(en);
    }
    expect(filtersOf(ctx, 'g1')).toEqual({ entries: [], floodMax: null });
    expect(ctx.repos.audit.recent('g1')).toEqual([]);
  });

  it('caps the list and its patterns, counted where they are written', async () => {
    const ctx = setup();
    for (let i = 0; i < FILTER_LIMITS.maxPatterns; i++) await addFilter(ctx, 'g1', admin, 'en', { word: `r/p${i}x/` });
    expect(await refusal(addFilter(ctx, 'g1', admin, 'en', { word: 'r/one-more/' }), 'en')).toBe(
      `The server already has ${FILTER_LIMITS.maxPatterns} filter patterns (r/…/), the most it can have. Remove some first. Nothing was added.`,
    );
    for (let i = FILTER_LIMITS.maxPatterns; i < FILTER_LIMITS.maxEntries; i++) await addFilter(ctx, 'g1', admin, 'en', { word: `w${i}` });
    expect(await refusal(addFilter(ctx, 'g1', admin, 'ja', { word: 'もう一つ' }), 'ja')).toBe(
      `フィルターはすでに上限の ${FILTER_LIMITS.maxEntries} 件です。先にいくつか削除してください。何も追加していません。`,
    );
    expect(filtersOf(ctx, 'g1').entries).toHaveLength(FILTER_LIMITS.maxEntries);
    // Changing what an existing filter does is not a new one.
    expect(await addFilter(ctx, 'g1', admin, 'en', { word: 'w50', action: 'skip' })).toEqual(skip('w50'));
  });

  it('sets and clears the flood limit', async () => {
    const ctx = setup();
    expect(await setFloodLimit(ctx, 'g1', admin, 3)).toBe(3);
    expect(filtersOf(ctx, 'g1').floodMax).toBe(3);
    expect(await setFloodLimit(ctx, 'g1', admin, 0)).toBeNull();
    expect(filtersOf(ctx, 'g1').floodMax).toBeNull();
  });
});
