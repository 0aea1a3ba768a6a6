import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { createRepositories, type Repositories } from '../../src/db/repositories.ts';
import { READING_DEFAULTS, READING_LIST_MAX } from '../../src/domain/reading.ts';
import type { Clock } from '../../src/util/clock.ts';

// The reading controls' tables (migrations/008): reading_settings, reading_lists, and the muted members of
// user_settings.
let db: Db;
let repos: Repositories;
let now = 1_700_000_000_000;
const clock: Clock = { now: () => now, sleep: async () => {} };

beforeEach(() => {
  db = openDatabase(':memory:');
  repos = createRepositories(db, { clock });
});
afterEach(() => db.close());

describe('ReadingSettingsRepo', () => {
  it('GIVEN a guild that never changed anything THEN the defaults, which match the SQL column defaults', () => {
    expect(repos.reading.get('g1')).toEqual({ guildId: 'g1', ...READING_DEFAULTS, updatedAt: null });
    db.prepare('INSERT INTO reading_settings (guild_id, updated_at) VALUES (?, ?)').run('g1', 5);
    expect(repos.reading.get('g1')).toEqual({ guildId: 'g1', ...READING_DEFAULTS, updatedAt: 5 });
  });

  it('GIVEN partial updates THEN only the given fields change; null clears the role', async () => {
    await repos.reading.update('g1', { bots: 'listed', requiredRoleId: 'r1' });
    const s = await repos.reading.update('g1', { emoji: true, bots: undefined });
    expect(s).toMatchObject({ bots: 'listed', emoji: true, requiredRoleId: 'r1', forwards: true });
    expect(repos.reading.get('g1')).toEqual(s);
    await repos.reading.update('g1', { requiredRoleId: null });
    expect(repos.reading.get('g1').requiredRoleId).toBeNull();
    expect(repos.reading.get('g2')).toMatchObject(READING_DEFAULTS);
  });

  it('GIVEN a value outside the schema THEN the database refuses it and nothing is written', async () => {
    await expect(repos.reading.update('g1', { bots: 'some' as never })).rejects.toThrow(/CHECK/);
    await expect(repos.reading.update('g1', { freshSeconds: 4 })).rejects.toThrow(/CHECK/);
    expect(repos.reading.get('g1').updatedAt).toBeNull();
    expect((await repos.reading.update('g1', { freshSeconds: 45, speedUp: false })).freshSeconds).toBe(45);
    expect(repos.reading.get('g1')).toMatchObject({ freshSeconds: 45, speedUp: false });
  });
});

describe('ReadingListsRepo', () => {
  it('GIVEN adds and removes THEN lists per guild and kind, oldest first, without duplicates', async () => {
    expect(await repos.readingLists.add('g1', 'bot', 'b2')).toBe('added');
    now += 1;
    expect(await repos.readingLists.add('g1', 'bot', 'b1')).toBe('added');
    expect(await repos.readingLists.add('g1', 'bot', 'b1')).toBe('exists');
    await repos.readingLists.add('g1', 'never_role', 'r1');
    expect(repos.readingLists.list('g1', 'bot')).toEqual(['b2', 'b1']);
    expect(repos.readingLists.list('g1', 'never_role')).toEqual(['r1']);
    expect(repos.readingLists.list('g2', 'bot')).toEqual([]);
    expect(await repos.readingLists.remove('g1', 'bot', 'b2')).toBe(true);
    expect(await repos.readingLists.remove('g1', 'bot', 'b2')).toBe(false);
    expect(repos.readingLists.list('g1', 'bot')).toEqual(['b1']);
  });

  it('GIVEN a full list THEN one more is refused and nothing is added', async () => {
    for (let i = 0; i < READING_LIST_MAX; i++) await repos.readingLists.add('g1', 'bot', `b${i}`);
    expect(await repos.readingLists.add('g1', 'bot', 'extra')).toBe('full');
    expect(repos.readingLists.list('g1', 'bot')).toHaveLength(READING_LIST_MAX);
  });
});

describe('UserSettingsRepo.muted', () => {
  it('GIVEN members muted and unmuted THEN lists the muted ones of that guild only', async () => {
    await repos.userSettings.set('g1', 'u1', { muted: true });
    await repos.userSettings.set('g1', 'u2', { muted: true, nickname: 'x' });
    await repos.userSettings.set('g2', 'u3', { muted: true });
    await repos.userSettings.set('g1', 'u2', { muted: false });
    expect(repos.userSettings.muted('g1')).toEqual(['u1']);
  });
});
