import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, MigrationError, openDatabase, type Db, type Migration } from '../../src/db/database.ts';
import { createRepositories, DictionaryRepo, GuildSettingsRepo, HistoryRepo, JobsRepo, UserSettingsRepo } from '../../src/db/repositories.ts';

let dir: string;
const open: Db[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'db-migrations-'));
});
afterEach(() => {
  for (const db of open.splice(0)) db.close();
  rmSync(dir, { recursive: true, force: true });
});

function openFile(name: string, migrations?: Migration[]): Db {
  const db = openDatabase(join(dir, name), migrations ? { migrations } : {});
  open.push(db);
  return db;
}

function version(db: Db): number {
  return (db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v;
}

function schema(db: Db): unknown[] {
  return db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name").all();
}

describe('migrations', () => {
  it('GIVEN a fresh file THEN it reaches the latest version with every table of 001', () => {
    const db = openFile('fresh.db');
    const migrations = loadMigrations();
    expect(version(db)).toBe(migrations.at(-1)!.version);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    expect(tables).toEqual(
      expect.arrayContaining([
        'guild_settings',
        'auto_read_channels',
        'user_settings',
        'dictionary_entries',
        'character_ledger',
        'advanced_jobs',
        'generation_history',
      ]),
    );
  });

  it('GIVEN a migrated database WHEN migrating again THEN nothing is applied and the schema is unchanged', () => {
    const db = openFile('again.db');
    const before = schema(db);
    expect(migrate(db)).toEqual([]);
    expect(schema(db)).toEqual(before);
    db.close();
    open.pop();
    const reopened = openFile('again.db');
    expect(schema(reopened)).toEqual(before);
  });

  it('GIVEN a database built by 001 only, with rows THEN it upgrades to the latest with the rows intact', () => {
    const all = loadMigrations();
    const db = openFile('old.db', all.slice(0, 1));
    expect(version(db)).toBe(1);
    // Only the repositories whose tables 001 already has in their current shape.
    const clock = { now: () => Date.now(), sleep: async () => {} };
    const repos = {
      guildSettings: new GuildSettingsRepo(db, clock), userSettings: new UserSettingsRepo(db, clock), dictionary: new DictionaryRepo(db, clock),
      history: new HistoryRepo(db, clock), jobs: new JobsRepo(db, clock),
    };
    repos.guildSettings.update('g1', { voice: 'ja-JP-Wavenet-C', userMonthlyLimit: 300 });
    // As 001 wrote it (the repository writes 004's post_audio column, which 001 does not have).
    db.prepare("INSERT INTO auto_read_channels (guild_id, channel_id, created_at) VALUES ('g1', 'c1', 0)").run();
    repos.userSettings.setNickname('g1', 'u1', 'たろう');
    repos.dictionary.add('g1', 'GitHub', 'ぎっとはぶ', 'u1');
    repos.history.record({ pk: 7, endpoint: 'standard', url: 'http://x/a.mp3', voice: 'v', characters: 3, text: 'abc', guildId: 'g1', userId: 'u1' });
    repos.jobs.insert({ jobId: 'j1', jobToken: 't', guildId: 'g1', userId: 'u1', channelId: 'c1', delivery: { x: 1 }, request: { text: 'hello there' } });
    db.prepare(
      "INSERT INTO character_ledger (reservation_id, guild_id, user_id, period_start, endpoint, chars, state, created_at) VALUES ('r', 'g1', 'u1', 0, 'standard', 12, 'committed', 0)",
    ).run();

    // A synthetic later migration too, so the upgrade path is exercised even while 001 is the only real one.
    const extra: Migration = { version: all.length + 1, name: 'test_extra', sql: 'CREATE TABLE test_extra (id INTEGER PRIMARY KEY);' };
    expect(migrate(db, [...all, extra])).toEqual([...all.slice(1).map((m) => m.version), extra.version]);
    expect(version(db)).toBe(extra.version);

    const after = createRepositories(db);
    expect(after.guildSettings.get('g1')).toMatchObject({ voice: 'ja-JP-Wavenet-C', userMonthlyLimit: 300 });
    expect(after.autoRead.entries('g1')).toEqual([{ channelId: 'c1', postAudio: false }]);
    expect(after.userSettings.get('g1', 'u1').nickname).toBe('たろう');
    expect(after.dictionary.list('g1')).toMatchObject([{ word: 'GitHub', reading: 'ぎっとはぶ' }]);
    expect(after.history.recent('g1')).toMatchObject([{ pk: 7, characters: 3 }]);
    expect(after.jobs.get('j1')).toMatchObject({ state: 'pending', delivery: { x: 1 } });
    expect(db.prepare('SELECT SUM(chars) FROM character_ledger').pluck().get()).toBe(12);
  });

  it('GIVEN a database whose version is newer than the code THEN opening it is refused with a clear message', () => {
    const db = openFile('newer.db');
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from_the_future', 0)").run();
    db.close();
    open.pop();
    let caught: unknown;
    try {
      openFile('newer.db');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(MigrationError);
    expect((caught as Error).message).toMatch(/version 999 is newer than this code knows/);
  });

  it('GIVEN a migration that fails THEN nothing of it is applied and the version stays', () => {
    const all = loadMigrations();
    const db = openFile('broken.db', all);
    const broken: Migration = { version: all.length + 1, name: 'broken', sql: 'CREATE TABLE half (id INTEGER); SELECT * FROM no_such_table;' };
    expect(() => migrate(db, [...all, broken])).toThrow(/no_such_table/);
    expect(version(db)).toBe(all.length);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").get()).toBeUndefined();
  });
});

describe('001 constraints', () => {
  it('rejects values outside the enums and booleans', () => {
    const db = openFile('checks.db');
    expect(() =>
      db.prepare("INSERT INTO character_ledger (reservation_id, guild_id, user_id, period_start, endpoint, chars, created_at) VALUES ('r','g','u',0,'premium',1,0)").run(),
    ).toThrow(/CHECK/);
    expect(() =>
      db.prepare("INSERT INTO guild_settings (guild_id, read_author_names, updated_at) VALUES ('g', 2, 0)").run(),
    ).toThrow(/CHECK/);
    expect(() =>
      db.prepare("INSERT INTO advanced_jobs (job_id, job_token, guild_id, user_id, channel_id, delivery, request, state, created_at, updated_at) VALUES ('j','t','g','u','c','{}','{}','lost',0,0)").run(),
    ).toThrow(/CHECK/);
    expect(() =>
      db.prepare("INSERT INTO generation_history (endpoint, voice, characters, text_hash, guild_id, user_id, created_at) VALUES ('standard','v',1,'not-a-hash','g','u',0)").run(),
    ).toThrow(/CHECK/);
  });
});
