import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { DICTIONARY_MAX_ENTRIES } from '../../src/db/keyed-dictionary.ts';
import { ENTRY_OVERHEAD_CHARS } from '../../src/db/dictionary-cache.ts';
import { createRepositories, type Repositories } from '../../src/db/repositories.ts';
import { effectiveVoice } from '../../src/domain/member-settings.ts';
import { GUILD_SETTINGS_DEFAULTS } from '../../src/domain/guild-settings.ts';
import { hashText } from '../../src/db/generation-history.ts';
import { FakeClock } from '../support/clock.ts';

let db: Db;
let repos: Repositories;
const clock = new FakeClock({ start: 1_700_000_000_000 });

beforeEach(() => {
  clock.set(1_700_000_000_000);
  db = openDatabase(':memory:');
  repos = createRepositories(db, { clock });
});
afterEach(() => db.close());

describe('GuildSettingsRepo', () => {
  it('GIVEN a guild that never changed anything THEN it gets the defaults', async () => {
    expect(repos.guildSettings.get('g1')).toEqual({ guildId: 'g1', ...GUILD_SETTINGS_DEFAULTS, updatedAt: null });
  });

  it('the code defaults match the SQL column defaults', async () => {
    db.prepare('INSERT INTO guild_settings (guild_id, updated_at) VALUES (?, ?)').run('g1', 5);
    expect(repos.guildSettings.get('g1')).toEqual({ guildId: 'g1', ...GUILD_SETTINGS_DEFAULTS, updatedAt: 5 });
  });

  it('GIVEN partial updates THEN only the given fields change and undefined leaves a field alone', async () => {
    await repos.guildSettings.update('g1', { voice: 'ja-JP-NanamiNeural', speed: 1.25 });
    await clock.advance(1000);
    const s = await repos.guildSettings.update('g1', { readAuthorNames: false, voice: undefined, guildMonthlyLimit: 2000 });
    expect(s).toMatchObject({
      voice: 'ja-JP-NanamiNeural',
      speed: 1.25,
      readAuthorNames: false,
      guildMonthlyLimit: 2000,
      updatedAt: clock.now(),
    });
    expect(repos.guildSettings.get('g1')).toEqual(s);
    expect(repos.guildSettings.get('g2')).toMatchObject({ voice: GUILD_SETTINGS_DEFAULTS.voice });
    await repos.guildSettings.update('g1', { guildMonthlyLimit: null });
    expect(repos.guildSettings.get('g1').guildMonthlyLimit).toBeNull();
  });
});

describe('AutoReadRepo', () => {
  const channels = (guildId: string) => repos.autoRead.entries(guildId).map((e) => e.channelId);

  it('adds, lists, checks and removes channels per guild', async () => {
    expect(await repos.autoRead.add('g1', 'c1')).toBe(true);
    expect(await repos.autoRead.add('g1', 'c1')).toBe(false);
    await clock.advance(1);
    await repos.autoRead.add('g1', 'c2');
    await repos.autoRead.add('g2', 'c9');
    expect(channels('g1')).toEqual(['c1', 'c2']);
    expect(repos.autoRead.isAutoRead('g1', 'c2')).toBe(true);
    expect(repos.autoRead.isAutoRead('g1', 'c9')).toBe(false);
    expect(await repos.autoRead.remove('g1', 'c1')).toBe(true);
    expect(await repos.autoRead.remove('g1', 'c1')).toBe(false);
    expect(channels('g1')).toEqual(['c2']);
    expect(channels('g2')).toEqual(['c9']);
  });

  it('adding a listed channel again changes only its MP3 option', async () => {
    await repos.autoRead.add('g1', 'c1');
    expect(repos.autoRead.postsAudio('g1', 'c1')).toBe(false);
    expect(await repos.autoRead.add('g1', 'c1', { postAudio: true })).toBe(false);
    expect(repos.autoRead.postsAudio('g1', 'c1')).toBe(true);
    expect(repos.autoRead.entries('g1')).toEqual([{ channelId: 'c1', postAudio: true }]);
    expect(repos.autoRead.postsAudio('g1', 'c2')).toBe(false);
  });
});

describe('UserSettingsRepo', () => {
  it('GIVEN no settings THEN the guild voice is used; a user override wins; reset goes back', async () => {
    const guild = await repos.guildSettings.update('g1', { voice: 'ja-JP-Wavenet-D', speed: 1.5 });
    expect(effectiveVoice(guild, repos.userSettings.get('g1', 'u1'))).toEqual({ voice: 'ja-JP-Wavenet-D', speed: 1.5, pitch: 0 });
    await repos.userSettings.set('g1', 'u1', { voice: 'ja-JP-Wavenet-A', pitch: 3 });
    expect(effectiveVoice(guild, repos.userSettings.get('g1', 'u1'))).toEqual({ voice: 'ja-JP-Wavenet-A', speed: 1.5, pitch: 3 });
    // The same user in another guild is unaffected.
    expect(repos.userSettings.get('g2', 'u1').voice).toBeNull();
    await repos.userSettings.set('g1', 'u1', { voice: null });
    expect(repos.userSettings.get('g1', 'u1')).toMatchObject({ voice: null, pitch: 3 });
    expect(await repos.userSettings.reset('g1', 'u1')).toBe(true);
    expect(repos.userSettings.get('g1', 'u1')).toMatchObject({ voice: null, pitch: null, updatedAt: null });
  });

  it('mute and nickname are kept alongside the voice', async () => {
    await repos.userSettings.set('g1', 'u1', { speed: 2 });
    await repos.userSettings.set('g1', 'u1', { muted: true });
    await repos.userSettings.set('g1', 'u1', { nickname: 'ボブ' });
    expect(repos.userSettings.get('g1', 'u1')).toMatchObject({ speed: 2, muted: true, nickname: 'ボブ' });
    expect(repos.userSettings.get('g1', 'u2').muted).toBe(false);
    await repos.userSettings.set('g1', 'u1', { muted: false });
    expect(repos.userSettings.get('g1', 'u1')).toMatchObject({ speed: 2, muted: false, nickname: 'ボブ' });
  });
});

describe('DictionaryRepo', () => {
  const long = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({ word: `${prefix}${String(i).padStart(4, '0')}`.padEnd(50, '語'), reading: 'よ'.repeat(100) }));

  it('keeps the lists read for speech up to a size in characters, not a count: the least recently read go first', async () => {
    // Room for about two members' 100 entries of 50 + 100 characters, whatever the number of lists.
    const small = createRepositories(db, { clock, dictionaryCacheChars: 2 * 100 * (150 + ENTRY_OVERHEAD_CHARS) + 5_000 });
    for (const member of ['m1', 'm2', 'm3']) await small.personalDictionary.import(member, long(member, 100), 'merge', undefined);
    const m1 = small.personalDictionary.readable('m1');
    const m2 = small.personalDictionary.readable('m2');
    expect(small.personalDictionary.readable('m1')).toBe(m1); // kept: the same array, compiled once
    // Many small server lists fit beside them: it is their size that counts.
    for (let g = 0; g < 50; g++) await small.dictionary.add(`g${g}`, 'w', 'わら', 'u1');
    for (let g = 0; g < 50; g++) small.dictionary.readable(`g${g}`);
    expect(small.personalDictionary.readable('m2')).toBe(m2);
    // A third long list pushes out the one read least recently (m1), not the one just read.
    small.personalDictionary.readable('m3');
    expect(small.personalDictionary.readable('m2')).toBe(m2);
    const again = small.personalDictionary.readable('m1');
    expect(again).not.toBe(m1);
    expect(again).toEqual(m1);
  });

  it('never keeps one list heavier than the whole bound (read again each time, still right)', async () => {
    const tiny = createRepositories(db, { clock, dictionaryCacheChars: 10 * (150 + ENTRY_OVERHEAD_CHARS) });
    await tiny.personalDictionary.import('m1', long('m', 100), 'merge', undefined);
    const first = tiny.personalDictionary.readable('m1');
    expect(first).toHaveLength(100);
    expect(tiny.personalDictionary.readable('m1')).not.toBe(first);
    expect(tiny.personalDictionary.readable('m1')).toEqual(first);
  });

  it("reads the operator's global list as one array for every guild and member: never merged or copied per guild", async () => {
    const global = Object.freeze([{ word: 'bot', reading: 'ぼっと' }]);
    repos.dictionary.setGlobal({ entries: () => global });
    await repos.dictionary.add('g1', 'GitHub', 'ぎっとはぶ', 'u1');
    await repos.personalDictionary.add('u2', 'ねこ', 'にゃんこ');
    const g1 = repos.dictionary.list('g1', 'u2').layers;
    const g2 = repos.dictionary.list('g2', 'u2').layers;
    expect(g1.map((l) => l.map((e) => e.word))).toEqual([['GitHub'], ['ねこ'], ['bot']]);
    expect(g2.map((l) => l.map((e) => e.word))).toEqual([['ねこ'], ['bot']]);
    // The same arrays: the member's list is shared by the guilds, the global one by all.
    expect(g1[2]).toBe(global);
    expect(g2[1]).toBe(global);
    expect(g1[1]).toBe(g2[0]);
    expect(repos.dictionary.list('g1').layers).toEqual([g1[0], global]);
  });

  // The compiled dictionary is cached per entries array; a new array per message
  // meant a recompile per message. The list is the same array until the dictionary changes.
  it('reads the same list while the dictionary is unchanged, a new one after any change (in any process)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dict-'));
    const file = join(dir, 'bot.db');
    const a = openDatabase(file);
    const b = openDatabase(file);
    try {
      const mine = createRepositories(a, { clock });
      const other = createRepositories(b, { clock });
      await mine.dictionary.add('g1', 'GitHub', 'ぎっとはぶ', 'u1');
      const first = mine.dictionary.readable('g1');
      expect(mine.dictionary.readable('g1')).toBe(first);
      expect(mine.dictionary.list('g1').layers[0]).toBe(first);
      expect(mine.dictionary.readable('g2')).toBe(mine.dictionary.readable('g2'));
      await other.dictionary.add('g1', 'w', 'わら', 'u2'); // another process changes it
      const second = mine.dictionary.readable('g1');
      expect(second).not.toBe(first);
      expect(second.map((e) => e.word)).toEqual(['GitHub', 'w']);
      expect(mine.dictionary.readable('g1')).toBe(second);
      expect(await other.dictionary.remove('g1', 'nope')).toBe(false);
      expect(mine.dictionary.readable('g1')).toBe(second); // nothing changed
      await other.dictionary.remove('g1', 'w');
      expect(mine.dictionary.readable('g1').map((e) => e.word)).toEqual(['GitHub']);
      expect(mine.dictionary.readable('g2')).toEqual([]);
      expect(mine.dictionary.list('g2').layers).toEqual([]);
    } finally {
      a.close();
      b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lists the longest word first, counting characters not bytes', async () => {
    await repos.dictionary.add('g1', 'Git', 'ぎっと', 'u1');
    await repos.dictionary.add('g1', 'GitHub Actions', 'ぎっとはぶあくしょんず', 'u1');
    await repos.dictionary.add('g1', '草', 'くさ', 'u1');
    await repos.dictionary.add('g1', 'GitHub', 'ぎっとはぶ', 'u1');
    // 4 characters but 12 UTF-8 bytes: must sort after 'GitHub' (6 chars).
    await repos.dictionary.add('g1', '東京都庁', 'とうきょうとちょう', 'u2');
    expect(repos.dictionary.own('g1').map((e) => e.word)).toEqual(['GitHub Actions', 'GitHub', '東京都庁', 'Git', '草']);
    expect(repos.dictionary.own('g2')).toEqual([]);
  });

  it('reads, of two words differing only in ASCII case, the upper-case one first (the matcher keeps the first), as the listing does', async () => {
    await repos.dictionary.add('g1', 'gpu', 'じーぴーゆー', 'u1');
    await repos.dictionary.add('g1', 'GPU', 'グラフィックス', 'u1');
    const words = (list: readonly { word: string }[]) => list.map((e) => e.word).filter((w) => w.toLowerCase() === 'gpu');
    expect(words(repos.dictionary.readable('g1'))).toEqual(['GPU', 'gpu']);
    expect(words(repos.dictionary.own('g1'))).toEqual(['GPU', 'gpu']);
  });

  it('adding an existing word replaces its reading; remove says whether it existed', async () => {
    expect(await repos.dictionary.add('g1', 'w', 'だぶりゅー', 'u1')).toBe('added');
    expect(await repos.dictionary.add('g1', 'w', 'わら', 'u2')).toBe('updated');
    expect(repos.dictionary.own('g1')).toEqual([{ guildId: 'g1', word: 'w', reading: 'わら', createdBy: 'u2', createdAt: clock.now() }]);
    expect(await repos.dictionary.remove('g1', 'w')).toBe(true);
    expect(await repos.dictionary.remove('g1', 'w')).toBe(false);
  });
});

describe('DictionaryRepo: the 5,000 entries counted where they are written', () => {
  const words = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ word: `${prefix}${i}`, reading: 'よみ' }));

  it('GIVEN two merges that each fit alone THEN the second is refused whole and nothing of it is written', async () => {
    expect(await repos.dictionary.import('g1', words('a', 2_600), 'merge', 'u1')).toEqual({ ok: true, total: 2_600 });
    const version = repos.dictionary.readable('g1');
    const second = await repos.dictionary.import('g1', [...words('a', 10), ...words('b', 2_600)], 'merge', 'u1');
    expect(second).toEqual({ ok: false, kind: 'entries', total: 5_200, max: DICTIONARY_MAX_ENTRIES });
    expect(repos.dictionary.readable('g1')).toBe(version); // not even the dictionary's version moved
    expect(await repos.dictionary.import('g1', words('b', 2_400), 'merge', 'u1')).toEqual({ ok: true, total: 5_000 });
  });

  it('GIVEN a full dictionary THEN add refuses a new word, still changes an existing one; replace counts only the file', async () => {
    await repos.dictionary.import('g1', words('a', DICTIONARY_MAX_ENTRIES), 'merge', 'u1');
    expect(await repos.dictionary.add('g1', 'new', 'にゅー', 'u1')).toBe('full');
    expect(await repos.dictionary.add('g1', 'a1', 'えーいち', 'u1')).toBe('updated');
    expect(repos.dictionary.own('g1')).toHaveLength(DICTIONARY_MAX_ENTRIES);
    expect(await repos.dictionary.import('g1', words('c', 3), 'replace', 'u1')).toEqual({ ok: true, total: 3 });
  });
});

describe('HistoryRepo', () => {
  it('records the hash of the text, never the text', async () => {
    const secret = 'my private message';
    const first = await repos.history.record({
      pk: 1,
      endpoint: 'standard',
      url: 'http://h/1.mp3',
      voice: 'ja-JP-Wavenet-B',
      characters: 18,
      text: secret,
      guildId: 'g1',
      userId: 'u1',
    });
    await clock.advance(10);
    const second = await repos.history.record({
      pk: 2,
      endpoint: 'advanced',
      url: null,
      voice: 'Ruby',
      characters: 11,
      text: 'hello world',
      guildId: 'g1',
      userId: 'u2',
    });
    expect(first).toMatchObject({ pk: 1, endpoint: 'standard', characters: 18, guildId: 'g1', userId: 'u1', createdAt: clock.now() - 10 });
    expect(first.textHash).toBe(hashText(secret));
    expect(first.textHash).toMatch(/^[0-9a-f]{64}$/);
    expect(second).toMatchObject({ pk: 2, url: null, createdAt: clock.now() });
    expect(second.id).toBeGreaterThan(first.id);
    const stored = db.prepare('SELECT * FROM generation_history ORDER BY id').all();
    expect(stored).toEqual([
      {
        id: first.id,
        pk: 1,
        endpoint: 'standard',
        url: 'http://h/1.mp3',
        voice: 'ja-JP-Wavenet-B',
        characters: 18,
        text_hash: hashText(secret),
        guild_id: 'g1',
        user_id: 'u1',
        created_at: clock.now() - 10,
      },
      {
        id: second.id,
        pk: 2,
        endpoint: 'advanced',
        url: null,
        voice: 'Ruby',
        characters: 11,
        text_hash: hashText('hello world'),
        guild_id: 'g1',
        user_id: 'u2',
        created_at: clock.now(),
      },
    ]);
    expect(JSON.stringify(stored)).not.toContain(secret);
  });
});

describe('JobsRepo', () => {
  const base = {
    jobId: 'j1',
    jobToken: 'tok-secret',
    guildId: 'g1',
    userId: 'u1',
    channelId: 'c1',
    delivery: { kind: 'voice', channelId: 'c1' },
    request: { text: 'read me aloud please', voice: 'Ruby', seed: 5 },
  };

  it('persists a job and walks it to delivered, keeping result fields', async () => {
    await repos.jobs.insert(base);
    expect(repos.jobs.listUnfinished().map((j) => j.jobId)).toEqual(['j1']);
    await repos.jobs.updateState('j1', 'running');
    await repos.jobs.updateState('j1', 'succeeded', { url: 'http://a/x.mp3', pk: 42, seed: 9 });
    await repos.jobs.clearText('j1');
    const done = repos.jobs.get('j1')!;
    expect(done).toMatchObject({ state: 'succeeded', url: 'http://a/x.mp3', pk: 42, seed: 9, delivery: base.delivery });
    expect(done.request).toEqual({ text: null, voice: 'Ruby', seed: 5 });
    // Succeeded but not yet delivered is still unfinished: a restart must deliver it.
    expect(repos.jobs.listUnfinished()).toHaveLength(1);
    expect(await repos.jobs.markDelivered('j1')).toBe(true);
    expect(repos.jobs.get('j1')).toMatchObject({ state: 'delivered', pk: 42 });
    expect(repos.jobs.listUnfinished()).toEqual([]);
  });

  it('a failed job records its code and is no longer unfinished', async () => {
    await repos.jobs.insert(base);
    await repos.jobs.updateState('j1', 'failed', { errorCode: 'content_policy_violation' });
    expect(repos.jobs.get('j1')).toMatchObject({ state: 'failed', errorCode: 'content_policy_violation' });
    expect(repos.jobs.listUnfinished()).toEqual([]);
    expect(await repos.jobs.updateState('nope', 'failed')).toBe(false);
    await clock.advance(1000);
    expect(await repos.jobs.deleteEndedBefore(clock.now())).toBe(1);
    expect(repos.jobs.get('j1')).toBeUndefined();
  });
});
