import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { createRepositories } from '../../src/db/repositories.ts';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, PERMISSIONS, defaultGuild, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import type { InteractionResponse } from '@yomiage/local-discord/types';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';

// Limits checked where they are committed, through `npm start` as a child process: the operator's
// ceilings on what server admins set (a stored value above one applies as the ceiling), the
// dictionary's 5,000 entries counted when an import is merged, a CSV export a spreadsheet does not
// run, and lists longer than one Discord message.
const bob = { id: DEFAULT_IDS.bob, username: 'bob' }; // Manage Server
const guildId = DEFAULT_IDS.guild;
const EPHEMERAL = 64;
const CHANNELS = 120;
// A channel only the owners' role can view: bob manages the server but is not in that role.
const OWNERS_ROLE = '1100000000000000190';
const OWNERS_ONLY = '1100000000000000191';
const ROLES = 100;

let emulator: Emulator;
let discord: FakeDiscord;
let dataDir: string;
let bot: ChildBot;
beforeAll(async () => {
  const guild = defaultGuild();
  guild.roles.push({ id: OWNERS_ROLE, name: 'Owners', permissions: '0', position: 2 });
  guild.channels.push({
    id: OWNERS_ONLY,
    name: 'keiei-kaigi',
    type: 0,
    position: 9,
    permissionOverwrites: [
      { id: DEFAULT_IDS.everyoneRole, type: 0, allow: '0', deny: String(PERMISSIONS.ViewChannel) },
      { id: OWNERS_ROLE, type: 0, allow: String(PERMISSIONS.ViewChannel), deny: '0' },
    ],
  });
  [emulator, discord] = await Promise.all([startEmulator(), startFakeDiscord({ guilds: [guild] })]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-limits-'));
  // What admins stored before the operator set the ceilings: a server limit far above them, many
  // auto-read channels and role allowances (ids Discord does not know: lists show them anyway).
  const db = openDatabase(join(dataDir, 'bot.sqlite3'));
  const repos = createRepositories(db);
  await repos.guildSettings.update(guildId, { guildMonthlyLimit: 2_000_000 });
  const id = (base: bigint, i: number) => String(base + BigInt(i));
  for (let i = 0; i < CHANNELS; i++) await repos.autoRead.add(guildId, id(1_300_000_000_000_000_000n, i));
  await repos.autoRead.add(guildId, OWNERS_ONLY);
  await repos.autoRead.add(guildId, DEFAULT_IDS.general);
  for (let i = 0; i < ROLES; i++) await repos.roleAllowances.set(guildId, id(1_400_000_000_000_000_000n, i), i === 0 ? 900_000 : 2_000 + i);
  db.close();
  bot = await startChildBot({ discord, emulator, dataDir, env: { GUILD_MONTHLY_CHARS_MAX: '50000' } });
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

async function run(name: string, options: unknown[] = [], locale = 'en-US') {
  const i = await discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: bob, name, locale, options: options as never });
  return { i, first: await i.waitForResponse((r) => r.kind === 'callback', 15_000) };
}
const sub = (name: string, options: unknown[] = []) => [{ name, type: 1, options }];
const text = (r: InteractionResponse) => String(r.data?.content ?? '');
async function click(messageId: string, r: InteractionResponse, label: string) {
  const rows = (r.data?.components as Array<{ components: Array<{ custom_id: string; label: string }> }>) ?? [];
  const button = rows.flatMap((row) => row.components).find((b) => b.label === label)!;
  const component = { messageId, customId: button.custom_id };
  const c = await discord.sendInteraction({ type: 3, channelId: DEFAULT_IDS.general, user: bob, name: '', locale: 'en-US', component });
  return c.waitForResponse((x) => x.kind === 'callback', 15_000);
}
/** Imports a file and waits for its summary (nothing merged yet). */
async function importFile(filename: string, data: string) {
  const upload = discord.uploadAttachment({ filename, data: Buffer.from(data, 'utf8') });
  const { i } = await run('dictionary', sub('import', [{ name: 'file', type: 11, value: upload.id }]));
  const summary = await i.waitForResponse((r) => r.kind === 'editOriginal', 15_000);
  return { messageId: i.original()!.id, summary };
}
async function exported(format: 'csv' | 'json') {
  const { first } = await run('dictionary', sub('export', [{ name: 'format', type: 3, value: format }]));
  return first.files[0]!.data.toString('utf8');
}

describe("the operator's ceilings", () => {
  it('an admin setting a limit above a ceiling is refused with the numbers (en, ja) and nothing is stored', async () => {
    const en = (await run('config', sub('server-limit', [{ name: 'value', type: 4, value: 60_000 }]))).first;
    expect(en.data?.flags).toBe(EPHEMERAL);
    expect(text(en)).toContain("At most 50,000 characters a month for this server: the bot operator's ceiling is 50,000.");
    expect(text(en)).toContain('60,000 was not saved; nothing was changed.');
    const ja = (await run('config', sub('server-limit', [{ name: 'value', type: 4, value: 60_000 }]), 'ja')).first;
    expect(ja.data?.flags).toBe(EPHEMERAL);
    expect(text(ja)).toContain('このサーバーに設定できるのは月 50,000 文字までです（ボット運営者の上限が 50,000 文字です）');
    const member = (await run('config', sub('user-limit', [{ name: 'value', type: 4, value: 5_000 }]))).first;
    expect(text(member)).toContain('At most 1,000 characters a month per member');
    const roleOptions = [
      { name: 'role', type: 8, value: DEFAULT_IDS.moderatorRole },
      { name: 'chars', type: 4, value: 60_000 },
    ];
    const role = (await run('spend', sub('role-limit', roleOptions), 'ja')).first;
    expect(text(role)).toContain('ロールの枠に設定できるのは月 50,000 文字までです');
    // Nothing of it was stored: the old value is still what /config show reports below.
    const within = (await run('config', sub('user-limit', [{ name: 'value', type: 4, value: 800 }]))).first;
    expect(text(within)).toBe('Saved: /config user-limit = 800');
    // Named as a Japanese client shows the command, not by its English id.
    const jaWithin = (await run('config', sub('user-limit', [{ name: 'value', type: 4, value: 800 }]), 'ja')).first;
    expect(text(jaWithin)).toBe('設定しました: /設定 利用上限 = 800');
  }, 30_000);

  it('a value stored above the ceiling applies as the ceiling and /config show says so', async () => {
    const show = (await run('config', sub('show'))).first;
    expect(text(show)).toContain("- Server monthly limit: 50,000 characters (stored 2,000,000; capped by the operator's ceiling)");
    expect(text(show)).toContain('- Per-member monthly limit: 800 characters');
    // Laid out as a list under a heading, one setting a line (not one line of slashes).
    const lines = text(show).split('\n');
    expect(lines[0]).toBe('**Server settings**');
    expect(lines.slice(1).every((l) => l.startsWith('- '))).toBe(true);
    expect(lines).toHaveLength(15);
    expect(lines).toContain(
      '- Fast reading: up to 2x (a message over 100 characters is read faster the longer it is, at most 2x; past 200 characters the rest is cut)',
    );
    expect(lines.at(-1)).toBe('- Voice pool: none');
    const usage = (await run('usage')).first;
    expect(text(usage)).toContain('Server total: 0 / 50000 characters');
  }, 30_000);
});

describe('lists longer than one message', () => {
  it('/autoread list and /spend roles answer with what fits and the whole list as a file, ephemeral', async () => {
    const channels = (await run('autoread', sub('list'))).first;
    expect(channels.data?.flags).toBe(EPHEMERAL);
    expect(text(channels)).toMatch(/^Auto-read channels: <#1300000000000000000>/);
    expect(text(channels)).toMatch(/…and \d+ more: the whole list is in the attached file\.$/);
    expect(text(channels).length).toBeLessThanOrEqual(2_000);
    expect(channels.files[0]!.name).toBe('autoread-channels.txt');
    const file = channels.files[0]!.data.toString('utf8').trim().split('\n');
    expect(file).toHaveLength(CHANNELS + 2);
    // A channel bob cannot view is listed by its id, never by its name; one he can view, by name.
    expect(file).toContain(`a channel you cannot view (${OWNERS_ONLY})`);
    expect(file.join('\n')).not.toContain('keiei-kaigi');
    expect(file).toContain(`#general (${DEFAULT_IDS.general})`);
    const roles = (await run('spend', sub('roles'))).first;
    expect(roles.data?.flags).toBe(EPHEMERAL);
    expect(text(roles)).toContain("<@&1400000000000000000> 900000 (applies as 50000: the operator's ceiling) (role deleted)");
    expect(roles.files[0]!.data.toString('utf8').trim().split('\n')).toHaveLength(ROLES);
  }, 30_000);
});

describe('the dictionary', () => {
  const risky = [
    ['-1', 'マイナスいち'],
    ['=x', 'イコールエックス'],
    ['@home', 'アットホーム'],
    ['+81', '=SUM(A1)'],
    ["'til", "'ティル"],
  ];

  it('a CSV export does not start a cell with a formula character and imports back to the same entries', async () => {
    for (const [word, reading] of risky) {
      const options = [
        { name: 'word', type: 3, value: word },
        { name: 'reading', type: 3, value: reading },
      ];
      const added = (await run('dictionary', sub('add', options))).first;
      expect(text(added)).toBe(`Added to the dictionary: ${word} → ${reading}`);
    }
    const csv = await exported('csv');
    const cells = csv
      .trim()
      .split('\r\n')
      .slice(1)
      .flatMap((line) => line.match(/"(?:[^"]|"")*"|[^,]+/g)!);
    expect(cells).toHaveLength(risky.length * 2);
    for (const cell of cells) expect(cell.replace(/^"/, ''), cell).not.toMatch(/^[=+\-@\t\r]/);
    expect(csv).toContain(`"'=x",イコールエックス`);
    const before = await exported('json');
    const { messageId, summary } = await importFile('dictionary.csv', csv);
    expect(text(summary)).toContain(`0 new, 0 changed, ${risky.length} the same`);
    const replaced = await click(messageId, summary, 'Replace');
    expect(text(replaced)).toBe(`Replaced the dictionary with the file's ${risky.length} entries. It has ${risky.length} entries.`);
    expect(await exported('json')).toBe(before);
    expect(JSON.parse(before)).toEqual(expect.arrayContaining(risky.map(([word, reading]) => ({ word, reading }))));
  }, 60_000);

  it('two imports summarised side by side, then both merged: the second is refused whole, at most 5,000 entries', async () => {
    const file = (prefix: string) => `word,reading\n${Array.from({ length: 2_600 }, (_, n) => `${prefix}${n}x,よみ`).join('\n')}\n`;
    const a = await importFile('a.csv', file('alpha'));
    const b = await importFile('b.csv', file('beta'));
    expect(text(a.summary)).toContain('2600 new');
    expect(text(b.summary)).toContain('2600 new');
    expect(text(await click(a.messageId, a.summary, 'Merge'))).toBe(
      `Merged 2600 entries. The dictionary has ${2_600 + risky.length} entries.`,
    );
    const second = await click(b.messageId, b.summary, 'Merge');
    expect(text(second)).toBe(
      `Merging would make ${5_200 + risky.length} entries, more than the 5000 allowed. ` + 'Nothing in the dictionary was changed.',
    );
    const list = (await run('dictionary', sub('list'))).first;
    expect(text(list)).toContain(`Dictionary (${2_600 + risky.length} entries)`);
    expect(list.files[0]!.data.toString('utf8').trim().split('\n')).toHaveLength(2_600 + risky.length);
  }, 60_000);
});
