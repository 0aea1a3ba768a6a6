import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { createRepositories } from '../../src/db/repositories.ts';
import { MOVED_TABLES, STAYING_TABLES, exportGuilds, importGuilds, removeGuilds, type GuildExport } from '../../src/ops/guild-transfer.ts';
import { CharacterBudget } from '../../src/billing/budget.ts';
import { MessageFatesTable } from '../../src/db/message-fates.ts';
import { guildOnShard } from '@yomiage/local-discord/fixtures';

// A command that exports one guild's rows (or a shard range's) and imports them on
// another host, to move a guild with its shard range. Round trip through the command line
// (`npm run guild`'s entry point as a child process), checked table by table.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(ROOT, 'src', 'ops', 'guild-cli.ts');
const run = promisify(execFile);
const X = guildOnShard(1, 4).id; // moves
const Y = guildOnShard(0, 4).id; // stays on the old host
const Z = guildOnShard(2, 4).id; // already on the new host
const KEY = 'a'.repeat(64);

let dir: string;
let source: Db;
let target: Db;

async function guild(cmd: string[], dataDir: string): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, ['--experimental-strip-types', CLI, ...cmd], {
    env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir },
    cwd: dir,
  });
}

/** Rows of `guildId` in `table`, in order, without the columns a database numbers itself. */
function rowsOf(db: Db, table: string, guildId: string): unknown[] {
  const own = ({ character_ledger: 'id', generation_history: 'id', pending_utterances: 'seq', audit_log: 'id' } as Record<string, string>)[
    table
  ];
  const rows = db.prepare(`SELECT * FROM ${table} WHERE guild_id = ?${own ? ` ORDER BY ${own}` : ''}`).all(guildId) as Record<
    string,
    unknown
  >[];
  const kept = rows.map((r) => Object.fromEntries(Object.entries(r).filter(([c]) => c !== own)));
  return own ? kept : kept.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

async function populate(db: Db, guildId: string, chars: number): Promise<void> {
  const repos = createRepositories(db);
  await repos.guildSettings.update(guildId, { voice: 'ja-JP-Wavenet-C', speed: 1.5, guildMonthlyLimit: 2_000 });
  await repos.dictionary.add(guildId, 'yomiage', 'よみあげ', 'u1');
  await repos.autoRead.add(guildId, `${guildId}9`, { postAudio: true });
  await repos.userSettings.set(guildId, 'u1', { nickname: 'たろう', speed: 1.2, volume: 0.5, adminVolume: 1.5 });
  await repos.voicePool.add(guildId, 'ja-JP-Wavenet-D');
  await repos.controls.update(guildId, { dictionaryRoleId: `${guildId}7`, narrateConfirmChars: 400 });
  await repos.roleAllowances.set(guildId, `${guildId}8`, 2_000);
  await repos.reading.update(guildId, { bots: 'listed', emoji: true });
  await repos.readingLists.add(guildId, 'bot', `${guildId}7`);
  await repos.audit.record(guildId, { userId: 'u1', name: 'Taro', via: 'dashboard' }, 'settings', { speed: 1.2 });
  await repos.filters.add(guildId, { word: 'バカ', action: 'replace', reading: 'ピー' }, 'u1');
  await repos.filters.setFlood(guildId, 3);
  await repos.sharing.setFollowable(guildId, true);
  await repos.sharing.follow(guildId, { kind: 'curated', source: 'gaming' }, 'u1');
  const budget = new CharacterBudget({ db });
  const paid = await budget.reserve([{ guildId, userId: 'u1', endpoint: 'standard', chars }], {
    audioKey: guildId === X ? KEY : 'b'.repeat(64),
  });
  if (!paid.ok) throw new Error('reserve');
  await budget.markSent(paid.reservation);
  await budget.charge(paid.reservation, { pk: chars });
  const held = await budget.reserve([{ guildId, userId: 'u2', endpoint: 'advanced', chars: 5 }]);
  if (!held.ok) throw new Error('reserve');
  const ins = (sql: string, ...args: unknown[]) => db.prepare(sql).run(...(args as never[]));
  for (const [i, text] of ['一番目', '二番目'].entries()) {
    ins(
      `INSERT INTO pending_utterances (id, guild_id, user_id, channel_id, kind, text, voice, speed, pitch, enqueued_at, saved_at) VALUES (?, ?, 'u1', 'c', 'auto', ?, 'v', 1, 0, ?, ?)`,
      `${guildId}-${i}`,
      guildId,
      text,
      i,
      i,
    );
  }
  // Channel ids are unique across servers: each guild's session names its own voice channel.
  ins(
    `INSERT INTO voice_sessions (guild_id, voice_channel_id, text_channel_id, updated_at) VALUES (?, 'vc-' || ?, 'tc', 1)`,
    guildId,
    guildId,
  );
  ins(
    `INSERT INTO advanced_jobs (job_id, job_token, guild_id, user_id, channel_id, delivery, request, created_at, updated_at) VALUES (?, 'tok', ?, 'u1', 'c', '{}', '{}', 1, 1)`,
    `job-${guildId}`,
    guildId,
  );
  const fate = {
    channelId: 'c',
    userId: 'u1',
    arrivedAt: Date.now(),
    fate: 'read',
    decidedAt: Date.now(),
    detail: { voiceChannelId: 'vc' },
  };
  await new MessageFatesTable(db).save([{ guildId, messageId: `m-${guildId}`, ...fate }], Date.now(), { keepMs: 3_600_000, perGuild: 10 });
  ins(
    `INSERT INTO generation_history (pk, endpoint, voice, characters, text_hash, guild_id, user_id, created_at) VALUES (7, 'standard', 'v', ?, ?, ?, 'u1', 1)`,
    chars,
    'c'.repeat(64),
    guildId,
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'yomiage-transfer-'));
  source = openDatabase(join(dir, 'old', 'bot.sqlite3'));
  target = openDatabase(join(dir, 'new', 'bot.sqlite3'));
  await populate(source, X, 30);
  await populate(source, Y, 20);
  await populate(target, Z, 11);
});
afterAll(() => {
  source.close();
  target.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('npm run guild: export, import, remove', () => {
  it('every table is either moved with a guild or said to stay (a new table must choose)', () => {
    const tables = source
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .pluck()
      .all() as string[];
    expect(tables.filter((t) => !(MOVED_TABLES as readonly string[]).includes(t) && !(t in STAYING_TABLES))).toEqual([]);
    const withGuild = tables.filter((t) =>
      (source.prepare(`SELECT name FROM pragma_table_info('${t}')`).pluck().all() as string[]).includes('guild_id'),
    );
    expect(withGuild.filter((t) => !(MOVED_TABLES as readonly string[]).includes(t))).toEqual(['ledger_totals']);
  });

  it('a shard range exported by the command and imported on another host: every row of its guild, and its budgets, are there', async () => {
    const file = join(dir, 'range.json');
    const out = await guild(['export', '--shards', '1', '--shard-count', '4', '--out', file], join(dir, 'old'));
    expect(out.stderr).toMatch(/exported 1 guild\(s\)/);
    const data = JSON.parse(readFileSync(file, 'utf8')) as GuildExport;
    expect(data.guilds).toEqual([X]);
    const accountBefore = (await new CharacterBudget({ db: target }).accountUsage()).used;
    expect((await guild(['import', file], join(dir, 'new'))).stderr).toMatch(/imported 1 guild\(s\)/);

    for (const t of MOVED_TABLES) {
      expect(rowsOf(target, t, X), t).toEqual(rowsOf(source, t, X));
      expect(rowsOf(source, t, X).length, `${t} has rows of the guild`).toBeGreaterThan(0);
      expect(rowsOf(target, t, Y), t).toEqual([]);
    }
    // Queued speech keeps its order; the budgets read the same; the account grows by the guild's use.
    expect((rowsOf(target, 'pending_utterances', X) as { text: string }[]).map((r) => r.text)).toEqual(['一番目', '二番目']);
    const [before, after] = [new CharacterBudget({ db: source }), new CharacterBudget({ db: target })];
    expect(await after.usage({ guildId: X })).toEqual(await before.usage({ guildId: X }));
    expect(await after.usage({ guildId: X, userId: 'u1' })).toEqual(await before.usage({ guildId: X, userId: 'u1' }));
    expect((await after.accountUsage()).used).toBe(accountBefore + 35);
    // Audio the account paid for stays free on the new host.
    expect(await after.reserve([{ guildId: X, userId: 'u1', endpoint: 'standard', chars: 30 }], { audioKey: KEY })).toMatchObject({
      ok: true,
      reservation: { free: true },
    });
  });

  it('importing the same guild again is refused and writes nothing', async () => {
    const count = () => target.prepare('SELECT COUNT(*) FROM character_ledger').pluck().get();
    const before = count();
    await expect(guild(['import', join(dir, 'range.json')], join(dir, 'new'))).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('guild_exists'),
    });
    expect(count()).toBe(before);
    const data = exportGuilds(source, [Y]);
    expect(() => importGuilds(target, { ...data, schemaVersion: data.schemaVersion + 1 })).toThrow(
      expect.objectContaining({ code: 'schema_mismatch' }),
    );
    expect(rowsOf(target, 'guild_settings', Y)).toEqual([]);
  });

  it('a file that is not what export writes is refused, naming the table, row and field, and nothing is written', () => {
    const tables = [...MOVED_TABLES, 'ledger_totals', 'paid_audio'];
    const everything = () => JSON.stringify(tables.map((t) => target.prepare(`SELECT * FROM ${t}`).all()));
    const before = everything();
    const good = exportGuilds(source, [Y]);
    type Edited = { schemaVersion: number; format: string; tables: Record<string, Record<string, unknown>[]> };
    const edited = (change: (data: Edited) => void) => {
      const data = structuredClone(good) as unknown as Edited;
      change(data);
      return data;
    };
    const refusal = (data: unknown) => {
      try {
        importGuilds(target, data);
      } catch (error) {
        return error as Error & { code: string };
      }
      throw new Error('imported');
    };
    // A key that would have been spliced into the INSERT as a column name.
    const column = refusal(edited((d) => (d.tables.user_settings![0]!['muted) VALUES (0); --'] = 1)));
    expect(column.code).toBe('invalid_export');
    expect(column.message).toContain('user_settings row 1: unknown field(s) "muted) VALUES (0); --"');
    expect(refusal(edited((d) => (d.tables.voice_channels = []))).message).toContain('tables: unknown table(s) "voice_channels"');
    const version = refusal(edited((d) => (d.schemaVersion += 1)));
    expect(version.code).toBe('schema_mismatch');
    expect(version.message).toContain(`version ${good.schemaVersion + 1}, this database is at ${good.schemaVersion}`);
    const format = refusal(edited((d) => (d.format = 'yomiage-guilds/2')));
    expect([format.code, format.message]).toEqual(['not_an_export', expect.stringContaining('"yomiage-guilds/2"')]);
    // A negative ledger row would hand characters back to the member's, the server's and the account's budgets.
    const negative = refusal(edited((d) => (d.tables.character_ledger![0]!.chars = -100_000)));
    expect(negative.code).toBe('invalid_export');
    expect(negative.message).toContain('character_ledger row 1, field chars: must not be negative');
    const state = refusal(edited((d) => (d.tables.character_ledger![1]!.state = 'refunded')));
    expect(state.message).toMatch(/character_ledger row 2, field state: .*"charged"/);
    expect(everything()).toBe(before);
  });

  it('remove on the old host: the guild is gone and the account total shrinks by exactly its use', async () => {
    const budget = new CharacterBudget({ db: source });
    const before = (await budget.accountUsage()).used;
    const { stderr } = await guild(['remove', X], join(dir, 'old'));
    expect(stderr).toMatch(/removed \d+ row/);
    for (const t of MOVED_TABLES) expect(rowsOf(source, t, X), t).toEqual([]);
    expect((await budget.accountUsage()).used).toBe(before - 35);
    expect((await budget.usage({ guildId: Y })).used).toBe(25);
    expect(removeGuilds(source, [X]).rows).toBe(0);
  });
});
