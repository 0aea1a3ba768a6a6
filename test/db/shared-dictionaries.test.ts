import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRepositories, type Repositories } from '../../src/db/repositories.ts';
import { applyDictionary, dictionaryCompilations } from '../../src/speech/text/dictionary.ts';
import { CuratedDictionaries } from '../../src/speech/text/curated-dictionaries.ts';
import { describeDictionaryFileProblem } from '../../src/usecases/dictionary-problems.ts';
import { followDictionary, setSharing, sharingOf, unfollowDictionary, type MemberFacts } from '../../src/usecases/shared-dictionaries.ts';
import { MAX_FOLLOWS } from '../../src/domain/shared-dictionaries.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { t, type Lang } from '../../src/i18n/texts.ts';
import type { Actor } from '../../src/domain/audit.ts';
import { createLogger } from '../../src/util/log.ts';
import { tempDb } from '../support/temp-db.ts';

// Shared dictionaries: a server follows another's dictionary (while that one shares it) or one of
// the operator's curated lists, read live under its own entries, each followed list the one array
// its owner reads (compiled once, never copied per follower); and the rules an admin meets.

const G1 = '1100000000000000001';
const G2 = '1100000000000000002';
const G3 = '1100000000000000003';
const admin: Actor = { userId: 'u1', name: 'Bob', via: 'command' };
/** The admin is in G1 and G2, not G3. */
const facts: MemberFacts = { nameIfMember: async (id) => ({ [G1]: 'One', [G2]: 'Two' })[id] };

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});
function repos(): Repositories {
  const d = tempDb();
  cleanup.push(d.close);
  return createRepositories(d.db);
}
function curatedDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'curated-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
const curatedOf = (dir: string) =>
  new CuratedDictionaries({
    dir,
    logger: createLogger({ level: 'silent', secrets: [] }),
    describe: (format, problem) => describeDictionaryFileProblem('en', format, problem),
  });
/** The lists of a folder, read. */
const loadedCurated = (files: Record<string, string>) => {
  const curated = curatedOf(curatedDir(files));
  expect(curated.load().ok).toBe(true);
  return curated;
};
async function refusal(work: Promise<unknown>, lang: Lang): Promise<string> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof UserError)) throw new Error(`not refused: ${String(error)}`);
  return t(lang, error.code, error.vars);
}

describe('GIVEN a server following another server’s dictionary THEN it is read live, under its own entries', () => {
  it('own entries win, the member’s next, the followed server’s fill in; a change there is read at once; unsharing stops it', async () => {
    const r = repos();
    await r.dictionary.add(G1, '猫', 'ねこ', 'u1');
    await r.personalDictionary.add('u9', '犬', 'わんちゃん');
    await r.dictionary.add(G2, '猫', 'にゃんこ', 'u2');
    await r.dictionary.add(G2, '犬', 'いぬ', 'u2');
    await r.dictionary.add(G2, 'r/[0-9]+円/', 'いくらか', 'u2');
    await setSharing({ repos: r }, G2, admin, true);
    await followDictionary({ repos: r }, G1, admin, G2, facts);
    const read = (text: string) => applyDictionary(text, r.dictionary.list(G1, 'u9'));
    expect(read('猫と犬と鳥、100円')).toBe('ねことわんちゃんと鳥、いくらか');
    await r.dictionary.add(G2, '鳥', 'とりさん', 'u2');
    expect(read('猫と犬と鳥')).toBe('ねことわんちゃんととりさん');
    await setSharing({ repos: r }, G2, admin, false);
    expect(read('鳥')).toBe('鳥');
    await setSharing({ repos: r }, G2, admin, true);
    await unfollowDictionary({ repos: r }, G1, admin, `guild:${G2}`, facts);
    expect(read('鳥')).toBe('鳥');
  });

  it('every follower reads the one array its owner reads, compiled once for all of them', async () => {
    const r = repos();
    await r.dictionary.add(G2, '猫', 'にゃんこ', 'u2');
    await setSharing({ repos: r }, G2, admin, true);
    const followers = Array.from({ length: 50 }, (_, i) => `12000000000000000${String(i).padStart(2, '0')}`);
    for (const f of followers) await followDictionary({ repos: r }, f, admin, G2, facts);
    const before = dictionaryCompilations();
    for (const f of followers) {
      const layers = r.dictionary.list(f).layers;
      expect(layers).toHaveLength(1);
      expect(layers[0]).toBe(r.dictionary.readable(G2));
      expect(applyDictionary('猫', r.dictionary.list(f))).toBe('にゃんこ');
    }
    expect(dictionaryCompilations() - before).toBe(1);
  });

  it('a curated list is read by those that follow it; a list removed from the folder stops being read', async () => {
    const dir = curatedDir({ 'gaming.tsv': '乙\tおつ\nr/w{3,}/\tわらわら\n', 'news.csv': 'word,reading\n速報,そくほう\n' });
    const curated = curatedOf(dir);
    expect(curated.load()).toEqual({ ok: true, lists: 2 });
    const r = repos();
    r.dictionary.setCurated(curated);
    await followDictionary({ repos: r }, G1, admin, 'gaming', facts);
    expect(applyDictionary('乙です', r.dictionary.list(G1))).toBe('おつです');
    expect(applyDictionary('乙です', r.dictionary.list(G2))).toBe('乙です');
    unlinkSync(join(dir, 'gaming.tsv'));
    curated.load();
    expect(applyDictionary('乙です', r.dictionary.list(G1))).toBe('乙です');
    expect((await sharingOf({ repos: r }, G1, facts)).follows).toEqual([
      { kind: 'curated', source: 'gaming', name: 'gaming', active: false },
    ]);
  });
});

describe('GIVEN an admin choosing what to follow THEN only what they may see is offered, and refusals say why', () => {
  it('offers servers that share and that the admin is in, and the curated lists; never a server they are not in', async () => {
    const r = repos();
    r.dictionary.setCurated(loadedCurated({ 'gaming.tsv': '乙\tおつ\n' }));
    for (const g of [G2, G3]) await setSharing({ repos: r }, g, admin, true);
    const view = await sharingOf({ repos: r }, G1, facts);
    expect(view.available).toEqual([
      { kind: 'guild', source: G2, name: 'Two' },
      { kind: 'curated', source: 'gaming', name: 'gaming' },
    ]);
    // By its id, a server the admin is not in may be followed (its admins share it), and is not named.
    expect(await followDictionary({ repos: r }, G1, admin, G3, facts)).toEqual({ kind: 'guild', source: G3, name: null });
    expect((await sharingOf({ repos: r }, G1, facts)).follows).toEqual([{ kind: 'guild', source: G3, name: null, active: true }]);
    expect(r.audit.recent(G1)[0]).toMatchObject({ action: 'dictionary.follow', detail: { kind: 'guild', source: G3 } });
  });

  it('refuses, in the admin’s language, with nothing changed', async () => {
    const r = repos();
    r.dictionary.setCurated(loadedCurated({ 'gaming.tsv': '乙\tおつ\n' }));
    await setSharing({ repos: r }, G2, admin, true);
    const cases: [(lang: Lang) => Promise<unknown>, string, string][] = [
      [
        () => followDictionary({ repos: r }, G1, admin, G1, facts),
        'このサーバー自身の辞書はフォローできません（すでに使われています）。',
        'A server cannot follow its own dictionary (it is already read).',
      ],
      // A server that does not share, and one that does not exist, are refused with the same words.
      [
        () => followDictionary({ repos: r }, G1, admin, G3, facts),
        `サーバー（ID ${G3}）の辞書はフォローできません: そのサーバーがないか、ボットがいないか、管理者がフォローを許可していません。何も変更していません。`,
        `The dictionary of server ${G3} cannot be followed: there is no such server, the bot is not in it, or its admins have not allowed following. Nothing was changed.`,
      ],
      [
        () => followDictionary({ repos: r }, G1, admin, '19999999999999999', facts),
        'サーバー（ID 19999999999999999）の辞書はフォローできません: そのサーバーがないか、ボットがいないか、管理者がフォローを許可していません。何も変更していません。',
        'The dictionary of server 19999999999999999 cannot be followed: there is no such server, the bot is not in it, or its admins have not allowed following. Nothing was changed.',
      ],
      [
        () => followDictionary({ repos: r }, G1, admin, 'anime', facts),
        '共有辞書「anime」はありません。何も変更していません。',
        'There is no curated list "anime". Nothing was changed.',
      ],
      [
        () => followDictionary({ repos: r }, G1, admin, 'not a source!', facts),
        'フォローする辞書は、サーバーID（17〜20桁の数字）か共有辞書の名前で指定してください。何も変更していません。',
        "Name the dictionary to follow by a server id (17 to 20 digits) or a curated list's name. Nothing was changed.",
      ],
      [
        () => unfollowDictionary({ repos: r }, G1, admin, 'gaming', facts),
        '「gaming」はフォローしていません。何も変更していません。',
        '"gaming" is not followed. Nothing was changed.',
      ],
      [() => setSharing({ repos: r }, G1, admin, 'yes'), expect.any(String) as unknown as string, expect.any(String) as unknown as string],
    ];
    for (const [work, ja, en] of cases) {
      expect(await refusal(work('ja') as Promise<unknown>, 'ja')).toEqual(ja);
      expect(await refusal(work('en') as Promise<unknown>, 'en')).toEqual(en);
    }
    expect(r.sharing.follows(G1)).toEqual([]);
    expect(r.sharing.isFollowable(G1)).toBe(false);
  });

  it(`follows at most ${MAX_FOLLOWS}, counted where it is written; the same one twice is said`, async () => {
    const r = repos();
    const sharing = ['1300000000000000001', '1300000000000000002', '1300000000000000003', '1300000000000000004'];
    for (const g of sharing) await setSharing({ repos: r }, g, admin, true);
    for (const g of sharing.slice(0, MAX_FOLLOWS)) await followDictionary({ repos: r }, G1, admin, `guild:${g}`, facts);
    expect(await refusal(followDictionary({ repos: r }, G1, admin, sharing[3], facts), 'en')).toBe(
      `A server follows at most ${MAX_FOLLOWS} dictionaries. Stop following one first. Nothing was changed.`,
    );
    await unfollowDictionary({ repos: r }, G1, admin, sharing[0], facts);
    expect(await refusal(followDictionary({ repos: r }, G1, admin, sharing[1], facts), 'ja')).toBe(
      `サーバー（ID ${sharing[1]}）の辞書はすでにフォローしています。`,
    );
    expect(r.sharing.follows(G1).map((f) => f.source)).toEqual(sharing.slice(1, MAX_FOLLOWS));
  });
});

describe('GIVEN the operator’s folder of curated lists THEN it is read as the global dictionary is', () => {
  it('a broken file, a bad name or two files for one list are problems at start, each named', () => {
    const dir = curatedDir({
      'good.tsv': '乙\tおつ\n',
      'bad.csv': 'word,reading\n<@1>,め\n',
      'Bad Name!.tsv': 'a\tb\n',
      'good.json': '{"x":"y"}',
    });
    const load = curatedOf(dir).load();
    expect(load.ok).toBe(false);
    expect(!load.ok && load.problems).toEqual([
      'Bad Name!.tsv: a list is named by its file: letters, digits, - and _ (at most 32)',
      expect.stringMatching(/^bad\.csv: line 2: /),
      'good.tsv: another file is the list "good" already',
    ]);
  });

  it('polls the folder: a list added, changed or removed is read from then on', async () => {
    const dir = curatedDir({ 'a.tsv': '乙\tおつ\n' });
    const curated = curatedOf(dir);
    curated.load();
    const stop = curated.watch(20);
    try {
      writeFileSync(join(dir, 'b.tsv'), '草\tくさ\n');
      await vi.waitUntil(() => curated.names().includes('b'), { timeout: 5_000 });
      writeFileSync(join(dir, 'a.tsv'), '乙\tおつかれ\n鯖\tさば\n');
      await vi.waitUntil(() => curated.entries('a')?.length === 2, { timeout: 5_000 });
      unlinkSync(join(dir, 'b.tsv'));
      await vi.waitUntil(() => !curated.names().includes('b'), { timeout: 5_000 });
      // A broken edit keeps what was read before.
      writeFileSync(join(dir, 'a.tsv'), '"unclosed\tx\n');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(curated.entries('a')).toHaveLength(2);
    } finally {
      stop();
    }
  });
});
