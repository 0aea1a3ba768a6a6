import { mkdtempSync, rmSync, unwatchFile, watchFile, writeFileSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createBot } from '../../src/bot.ts';
import { DEFAULT_TOKEN } from '@yomiage/tts-emulator';
import { defaultGuild } from '@yomiage/local-discord/fixtures';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import type { InteractionResponse } from '@yomiage/local-discord/types';
import { createLogger } from '../../src/util/log.ts';
import { standardRequests, startHarness, type Harness } from '../support/bot-harness.ts';

// The dictionary controls, end to end against the loopback Discord and the emulator: who may
// edit, import with a summary first, export, and the operator's global dictionary.
const guildId = DEFAULT_IDS.guild;
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' }; // Manage Server
const EDITORS = '1000000000000000601';
const EPHEMERAL = 64;

let h: Harness;
let dir: string;
let globalFile: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'yomiage-dict-'));
  globalFile = join(dir, 'global.csv');
  writeFileSync(globalFile, 'word,reading\nyomiage,よみあげボット\nGPU,ジーピーユー\n');
  const guild = defaultGuild();
  guild.roles.push({ id: EDITORS, name: 'Dictionary editors', permissions: '0', position: 3 });
  h = await startHarness({
    discord: { guilds: [guild] },
    env: { GLOBAL_DICTIONARY_FILE: globalFile },
    bot: { buttonTimeoutMs: 5_000, dictionaryWatchMs: 50 },
  });
}, 60_000);
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

type User = { id: string; username: string };
async function dictionary(user: User, sub: string, options: unknown[] = [], extra: { locale?: string; roles?: string[] } = {}) {
  const i = await h.discord.sendInteraction({
    channelId: DEFAULT_IDS.general,
    user,
    name: 'dictionary',
    locale: extra.locale ?? 'en-US',
    options: [{ name: sub, type: 1, options }] as never,
    ...(extra.roles ? { member: { roles: extra.roles } } : {}),
  });
  const first = await i.waitForResponse((r) => r.kind === 'callback', 10_000);
  return { i, first, text: String(first.data?.content ?? '') };
}
/** An import: the member uploads the file with the command; returns the deferred reply's first edit. */
async function importFile(user: User, filename: string, data: Buffer | string, locale = 'en-US') {
  const upload = h.discord.uploadAttachment({
    filename,
    data: Buffer.isBuffer(data) ? data : Buffer.from(data, 'utf8'),
    contentType: 'text/plain',
  });
  const { i, first } = await dictionary(user, 'import', [{ name: 'file', type: 11, value: upload.id }], { locale });
  if (first.type === 4) return { i, answer: first };
  return { i, answer: await i.waitForResponse((r) => r.kind === 'editOriginal', 10_000) };
}
const buttonsOf = (r: InteractionResponse) =>
  ((r.data?.components as Array<{ components: Array<{ custom_id: string; label: string }> }> | undefined) ?? []).flatMap(
    (row) => row.components,
  );
async function click(i: { original(): { id: string } | undefined }, r: InteractionResponse, label: string, user: User) {
  const button = buttonsOf(r).find((b) => b.label === label);
  if (!button) throw new Error(`no button ${label}`);
  const c = await h.discord.sendInteraction({
    type: 3,
    channelId: DEFAULT_IDS.general,
    user,
    name: '',
    locale: 'en-US',
    component: { messageId: i.original()!.id, customId: button.custom_id },
  });
  return c.waitForResponse((x) => x.kind === 'callback', 10_000);
}
const own = () =>
  h.bot.context.repos.dictionary
    .own(guildId)
    .map((e) => `${e.word}=${e.reading}`)
    .sort();
async function spoken(text: string): Promise<string> {
  const before = standardRequests(h.emulator).length;
  const i = await h.discord.sendInteraction({
    channelId: DEFAULT_IDS.general,
    user: bob,
    name: 'say',
    locale: 'en-US',
    options: [{ name: 'text', type: 3, value: text }],
  });
  await i.waitForResponse((r) => r.files.length > 0, 20_000);
  return standardRequests(h.emulator).slice(before).at(-1)!.text;
}

describe('who may edit the dictionary', () => {
  it('Manage Server by default; a member without it is refused (ja, en) and nothing changes', async () => {
    const en = await dictionary(alice, 'add', [
      { name: 'word', type: 3, value: 'abc' },
      { name: 'reading', type: 3, value: 'えーびーしー' },
    ]);
    expect(en.first.data?.flags).toBe(EPHEMERAL);
    expect(en.text).toBe('Editing the dictionary needs the Manage Server permission. Nothing was changed.');
    const ja = await dictionary(alice, 'remove', [{ name: 'word', type: 3, value: 'abc' }], { locale: 'ja' });
    expect(ja.text).toContain('サーバー管理');
    expect(own()).toEqual([]);
    // A mention as a word is refused even to an admin, with the reason.
    const mention = await dictionary(
      bob,
      'add',
      [
        { name: 'word', type: 3, value: '<@1000000000000000002>' },
        { name: 'reading', type: 3, value: 'ありす' },
      ],
      { locale: 'ja' },
    );
    expect(mention.text).toContain('語句にメンションは使えません。');
    expect(own()).toEqual([]);
    // Everyone may still read it.
    expect((await dictionary(alice, 'list')).text).toBe('The dictionary is empty.');
  });

  it('admins allow a role; its members may edit, others still not; a deleted role is refused', async () => {
    expect((await dictionary(alice, 'editors', [{ name: 'role', type: 8, value: EDITORS }])).text).toContain('Manage Server');
    const gone = await dictionary(bob, 'editors', [{ name: 'role', type: 8, value: '1000000000000000999' }]);
    expect(gone.text).toContain('no longer exists');
    expect(h.bot.context.repos.controls.get(guildId).dictionaryRoleId).toBeNull();
    expect((await dictionary(bob, 'editors', [{ name: 'role', type: 8, value: EDITORS }])).text).toContain(`<@&${EDITORS}>`);
    const editor = await dictionary(
      alice,
      'add',
      [
        { name: 'word', type: 3, value: 'abc' },
        { name: 'reading', type: 3, value: 'えーびーしー' },
      ],
      { roles: [EDITORS] },
    );
    expect(editor.text).toContain('Added');
    const other = await dictionary(alice, 'remove', [{ name: 'word', type: 3, value: 'abc' }], { roles: [] });
    expect(other.text).toContain(`<@&${EDITORS}>`);
    expect(own()).toEqual(['abc=えーびーしー']);
    await dictionary(bob, 'editors');
    expect(h.bot.context.repos.controls.get(guildId).dictionaryRoleId).toBeNull();
  });
});

describe('import and export', () => {
  it('a CSV import shows a summary first; Merge applies it, Cancel and Replace do what they say', async () => {
    const csv = 'word,reading\r\nabc,エービーシー\r\n"foo, bar",ふーばー\r\nxyz,えっくすわいぜっと\r\n';
    const { i, answer } = await importFile(bob, 'dict.csv', csv);
    expect(answer.data?.content).toBe(
      '3 entries in the file (nothing changed yet):\n2 new, 1 changed, 0 the same\nMerge adds and changes them in the current dictionary (1 entries). Replace also removes the 0 entries not in the file.',
    );
    expect(own()).toEqual(['abc=えーびーしー']); // nothing yet
    const merged = await click(i, answer, 'Merge', bob);
    expect(String(merged.data?.content)).toBe('Merged 3 entries. The dictionary has 3 entries.');
    expect(own()).toEqual(['abc=エービーシー', 'foo, bar=ふーばー', 'xyz=えっくすわいぜっと']);

    const tsv = await importFile(bob, 'other-bot.txt', 'abc\tえいびいしい\nnew\tにゅう\n');
    expect(String(tsv.answer.data?.content)).toContain('1 new, 1 changed, 0 the same');
    expect(String((await click(tsv.i, tsv.answer, 'Cancel', bob)).data?.content)).toContain('Nothing in the dictionary was changed');
    expect(own()).toHaveLength(3);
    const again = await importFile(bob, 'other-bot.txt', 'abc\tえいびいしい\nnew\tにゅう\n');
    expect(String(again.answer.data?.content)).toContain('Replace also removes the 2 entries');
    await click(again.i, again.answer, 'Replace', bob);
    expect(own()).toEqual(['abc=えいびいしい', 'new=にゅう']);
  });

  it('bad rows are listed with their line numbers (ja, en) and nothing changes', async () => {
    const before = own();
    const csv = 'word,reading\nok,おーけー\n<@123456789012345678>,めんしょん\nthree,columns,here\n"unclosed,x\n';
    const en = await importFile(bob, 'bad.csv', csv);
    const text = String(en.answer.data?.content);
    expect(text).toContain('Cannot import this file. Nothing in the dictionary was changed.');
    expect(text).toContain('line 3: The word cannot contain a mention.');
    expect(text).toContain('line 4: Expected 2 columns (word, reading); found 3.');
    expect(text).toContain('line 5: A quote (") is never closed.');
    expect(buttonsOf(en.answer)).toEqual([]);
    const ja = await importFile(bob, 'bad.csv', csv, 'ja');
    expect(String(ja.answer.data?.content)).toContain('3行目: 語句にメンションは使えません。');
    expect(own()).toEqual(before);
  });

  it('a 10 MB file is refused before it is downloaded; more than 5,000 entries are refused; nothing changes', async () => {
    const before = own();
    const big = await importFile(bob, 'big.csv', Buffer.alloc(10 * 1024 * 1024, 0x61));
    expect(big.answer.type).toBe(4);
    expect(String(big.answer.data?.content)).toContain('The file is too large (10485760 bytes; at most 1048576).');
    const many = Array.from({ length: 5_001 }, (_, n) => `w${n},よみ`).join('\n');
    const tooMany = await importFile(bob, 'many.csv', many);
    expect(String(tooMany.answer.data?.content)).toContain('Too many entries (5001; at most 5000).');
    const members = await importFile(alice, 'dict.csv', 'a,b\n');
    expect(String(members.answer.data?.content)).toContain('Manage Server');
    expect(own()).toEqual(before);
  });

  it('export gives a file that imports back to the same dictionary (JSON and CSV)', async () => {
    for (const format of ['json', 'csv']) {
      const { i } = await dictionary(alice, 'export', [{ name: 'format', type: 3, value: format }]);
      const reply = i.responses()[0]!;
      expect(reply.files[0]!.name).toBe(`dictionary.${format}`);
      const back = await importFile(bob, `dictionary.${format}`, reply.files[0]!.data);
      expect(String(back.answer.data?.content)).toContain('0 new, 0 changed, 2 the same');
      await click(back.i, back.answer, 'Cancel', bob);
    }
    const json = JSON.parse((await dictionary(alice, 'export')).i.responses()[0]!.files[0]!.data.toString('utf8'));
    expect(json).toEqual([
      { word: 'abc', reading: 'えいびいしい' },
      { word: 'new', reading: 'にゅう' },
    ]);
  });
});

describe("the operator's global dictionary", () => {
  it('applies under the server entries and is reloaded when the file changes', async () => {
    expect(await spoken('yomiage と GPU')).toBe('よみあげボット と ジーピーユー');
    // The server's own entry for the same word wins.
    await dictionary(bob, 'add', [
      { name: 'word', type: 3, value: 'GPU' },
      { name: 'reading', type: 3, value: 'グラフィックス' },
    ]);
    expect(await spoken('yomiage の GPU')).toBe('よみあげボット の グラフィックス');
    writeFileSync(globalFile, '[{"word": "yomiage", "reading": "読み上げくん"}]');
    // The file is named .csv but holds JSON: still read (the content decides).
    await vi.waitUntil(
      () =>
        h.bot.context.repos.dictionary
          .list(guildId)
          .layers.flat()
          .some((e) => e.reading === '読み上げくん'),
      {
        timeout: 5_000,
        interval: 10,
        message: 'the reload',
      },
    );
    expect(await spoken('yomiage です')).toBe('読み上げくん です');
    // A broken edit is ignored: the previous entries stay. Seen once the file's change has been
    // handled: Node runs the listeners of one watched file in order, and the bot's came first.
    const handled = new Promise<void>((resolve) => {
      const seen = (now: Stats, before: Stats) => {
        if (now.mtimeMs === before.mtimeMs && now.size === before.size) return;
        unwatchFile(globalFile, seen);
        resolve();
      };
      watchFile(globalFile, { interval: 50, persistent: false }, seen);
    });
    writeFileSync(globalFile, 'word,reading\n<@&1>,x\n');
    await handled;
    expect(await spoken('yomiage でした')).toBe('読み上げくん でした');
  }, 60_000);

  it('a broken file stops start-up with a message naming the variable and the line', async () => {
    const broken = join(dir, 'broken.csv');
    writeFileSync(broken, 'a,b\nc\n');
    const config = loadConfig({
      DISCORD_TOKEN: h.discord.token,
      DISCORD_API_URL: h.discord.apiUrl,
      TTS_TOKEN: DEFAULT_TOKEN,
      TTS_BASE_URL: h.emulator.baseUrl,
      DATA_DIR: join(dir, 'data'),
      GLOBAL_DICTIONARY_FILE: broken,
    });
    await expect(createBot({ config, logger: createLogger({ level: 'silent' }) })).rejects.toThrow(
      /GLOBAL_DICTIONARY_FILE: line 2: Expected 2 columns/,
    );
  });
});
