import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, openDatabase, type Db, type Migration } from '../../src/db/database.ts';
import { MigrationError } from '../../src/db/errors.ts';
import { createRepositories } from '../../src/db/repositories.ts';
import { HistoryRepo } from '../../src/db/generation-history.ts';

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
  it('GIVEN a fresh file THEN it reaches the latest version with every table of 001', async () => {
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
        'personal_dictionary_entries',
        'character_ledger',
        'advanced_jobs',
        'generation_history',
      ]),
    );
  });

  it('GIVEN a migrated database WHEN migrating again THEN nothing is applied and the schema is unchanged', async () => {
    const db = openFile('again.db');
    const before = schema(db);
    expect(migrate(db)).toEqual([]);
    expect(schema(db)).toEqual(before);
    db.close();
    open.pop();
    const reopened = openFile('again.db');
    expect(schema(reopened)).toEqual(before);
  });

  it('GIVEN a database built by 001 only, with rows THEN it upgrades to the latest with the rows intact', async () => {
    const all = loadMigrations();
    const db = openFile('old.db', all.slice(0, 1));
    expect(version(db)).toBe(1);
    // Repositories of tables 001 already had (createRepositories needs the latest schema).
    const repos = { history: new HistoryRepo(db) };
    await repos.history.record({
      pk: 7,
      endpoint: 'standard',
      url: 'http://x/a.mp3',
      voice: 'v',
      characters: 3,
      text: 'abc',
      guildId: 'g1',
      userId: 'u1',
    });
    // Tables whose repositories need later columns are written as 001 knew them.
    db.prepare(
      "INSERT INTO guild_settings (guild_id, voice, user_monthly_limit, updated_at) VALUES ('g1', 'ja-JP-Wavenet-C', 300, 0)",
    ).run();
    db.prepare("INSERT INTO user_settings (guild_id, user_id, nickname, updated_at) VALUES ('g1', 'u1', 'たろう', 0)").run();
    db.prepare("INSERT INTO auto_read_channels (guild_id, channel_id, created_at) VALUES ('g1', 'c1', 0)").run();
    db.prepare(
      "INSERT INTO dictionary_entries (guild_id, word, reading, created_by, created_at) VALUES ('g1', 'GitHub', 'ぎっとはぶ', 'u1', 0)",
    ).run();
    db.prepare(
      `INSERT INTO advanced_jobs (job_id, job_token, guild_id, user_id, channel_id, delivery, request, created_at, updated_at)
       VALUES ('j1', 't', 'g1', 'u1', 'c1', '{"x":1}', '{"text":"hello there"}', 0, 0)`,
    ).run();
    db.prepare(
      "INSERT INTO character_ledger (reservation_id, guild_id, user_id, period_start, endpoint, chars, state, created_at) VALUES ('r', 'g1', 'u1', 0, 'standard', 12, 'committed', 0)",
    ).run();
    db.prepare(
      "INSERT INTO character_ledger (reservation_id, guild_id, user_id, period_start, endpoint, chars, state, created_at) VALUES ('h', 'g1', 'u2', 0, 'advanced', 5, 'reserved', 0)",
    ).run();

    // A synthetic later migration too, so the upgrade path is exercised even while 001 is the only real one.
    const extra: Migration = { version: all.length + 1, name: 'test_extra', sql: 'CREATE TABLE test_extra (id INTEGER PRIMARY KEY);' };
    expect(migrate(db, [...all, extra])).toEqual([...all.slice(1).map((m) => m.version), extra.version]);
    expect(version(db)).toBe(extra.version);

    const after = createRepositories(db);
    expect(after.guildSettings.get('g1')).toMatchObject({ voice: 'ja-JP-Wavenet-C', userMonthlyLimit: 300 });
    expect(after.autoRead.entries('g1')).toEqual([{ channelId: 'c1', postAudio: false }]);
    expect(after.userSettings.get('g1', 'u1')).toMatchObject({ nickname: 'たろう', volume: null, adminVolume: null });
    expect(after.dictionary.own('g1')).toMatchObject([{ word: 'GitHub', reading: 'ぎっとはぶ' }]);
    expect(after.dictionary.list('g1').layers).toEqual([[{ word: 'GitHub', reading: 'ぎっとはぶ' }]]);
    expect(db.prepare("SELECT pk, characters FROM generation_history WHERE guild_id = 'g1'").all()).toEqual([{ pk: 7, characters: 3 }]);
    expect(after.jobs.get('j1')).toMatchObject({ state: 'pending', delivery: { x: 1 }, leaseOwner: null, discard: false });
    // 004: committed rows became charged, held ones stay held, and the running totals match them.
    expect(db.prepare('SELECT state, SUM(chars) AS n FROM character_ledger GROUP BY state ORDER BY state').all()).toEqual([
      { state: 'charged', n: 12 },
      { state: 'reserved', n: 5 },
    ]);
    expect(
      db.prepare("SELECT reserved, charged, uncertain FROM ledger_totals WHERE guild_id = '' AND user_id = '' ORDER BY endpoint").all(),
    ).toEqual([
      { reserved: 5, charged: 0, uncertain: 0 },
      { reserved: 0, charged: 12, uncertain: 0 },
    ]);
    expect(db.prepare("SELECT SUM(charged) FROM ledger_totals WHERE guild_id = 'g1' AND user_id = 'u1'").pluck().get()).toBe(12);
  });

  it('GIVEN a database whose version is newer than the code THEN opening it is refused with a clear message', async () => {
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

  it('GIVEN a migration that fails THEN nothing of it is applied and the version stays', async () => {
    const all = loadMigrations();
    const db = openFile('broken.db', all);
    const broken: Migration = {
      version: all.length + 1,
      name: 'broken',
      sql: 'CREATE TABLE half (id INTEGER); SELECT * FROM no_such_table;',
    };
    expect(() => migrate(db, [...all, broken])).toThrow(/no_such_table/);
    expect(version(db)).toBe(all.length);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").get()).toBeUndefined();
  });
});

describe('001 constraints', () => {
  it('rejects values outside the enums and booleans', async () => {
    const db = openFile('checks.db');
    expect(() =>
      db
        .prepare(
          "INSERT INTO character_ledger (reservation_id, guild_id, user_id, period_start, endpoint, chars, created_at) VALUES ('r','g','u',0,'premium',1,0)",
        )
        .run(),
    ).toThrow(/CHECK/);
    expect(() => db.prepare("INSERT INTO guild_settings (guild_id, read_author_names, updated_at) VALUES ('g', 2, 0)").run()).toThrow(
      /CHECK/,
    );
    expect(() =>
      db
        .prepare(
          "INSERT INTO advanced_jobs (job_id, job_token, guild_id, user_id, channel_id, delivery, request, state, created_at, updated_at) VALUES ('j','t','g','u','c','{}','{}','lost',0,0)",
        )
        .run(),
    ).toThrow(/CHECK/);
    expect(() =>
      db
        .prepare(
          "INSERT INTO generation_history (endpoint, voice, characters, text_hash, guild_id, user_id, created_at) VALUES ('standard','v',1,'not-a-hash','g','u',0)",
        )
        .run(),
    ).toThrow(/CHECK/);
  });
});
