import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { defaultGuild, guildOnShard } from '@yomiage/local-discord/fixtures';
import { SHORT_TONES, standardRequests } from '../support/bot-harness.ts';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';

// Filters, pattern entries and shared dictionaries through the real entry point: `npm start` as a
// child process (test/support/child-bot.ts) against the loopback Discord (two servers with the bot)
// and the emulator, with a folder of curated lists. #chat posts MP3s, so every message read is one
// request the emulator logs, and a message not read is shown by a later marker being sent while it
// never was: a filtered word read as ピー, a skipped message never sent (its author told), a flood
// summarised in one line, an r/…/ entry applied, another server's dictionary followed, read, and
// unfollowed, and a curated list followed.
const bob = { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' }; // Manage Server in both servers
const carol = { id: '1000000000000000031', username: 'carol' };
const dave = { id: '1000000000000000044', username: 'dave', globalName: 'Dave' };
const other = guildOnShard(0, 1, 1);
const otherGeneral = other.channels.find((c) => c.name === 'general')!.id;
const EPHEMERAL = 64;

let emulator: Emulator;
let discord: FakeDiscord;
let dataDir: string;
let curated: string;
let bot: ChildBot;
beforeAll(async () => {
  [emulator, discord] = await Promise.all([
    startEmulator({ ...SHORT_TONES, control: true }),
    startFakeDiscord({ guilds: [defaultGuild(), other] }),
  ]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-filters-'));
  curated = mkdtempSync(join(tmpdir(), 'yomiage-curated-'));
  writeFileSync(join(curated, 'gaming.tsv'), '乙\tおつ\n');
  bot = await startChildBot({ discord, emulator, dataDir, env: { CURATED_DICTIONARIES_DIR: curated } });
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close()]);
  for (const dir of [dataDir, curated]) if (dir) rmSync(dir, { recursive: true, force: true });
});

async function run(name: string, sub: string, options: unknown[] = [], locale = 'ja', channelId: string = DEFAULT_IDS.general) {
  const i = await discord.sendInteraction({ channelId, user: bob, name, locale, options: [{ name: sub, type: 1, options }] as never });
  const reply = await i.waitForResponse((r) => r.kind === 'callback', 15_000);
  return { content: String(reply.data?.content ?? ''), flags: reply.data?.flags };
}
const str = (name: string, value: string) => ({ name, type: 3, value });
const texts = (from: number) =>
  standardRequests(emulator)
    .slice(from)
    .map((r) => r.text)
    .join('|');
let marker = 0;
/** What was sent to the service from `send` up to a marker message posted after it. */
async function spokenAround(send: () => Promise<unknown>): Promise<string> {
  const before = standardRequests(emulator).length;
  await send();
  const mark = `目印${++marker}番です`;
  await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: carol, content: mark });
  await vi.waitUntil(() => texts(before).includes(mark), { timeout: 20_000, interval: 50, message: mark });
  return texts(before);
}
const post = (author: { id: string; username: string }, content: string) =>
  discord.sendMessage({ channelId: DEFAULT_IDS.chat, author, content });

describe('npm start: filters, pattern entries and shared dictionaries', () => {
  it('a filtered word is read as ピー, a pattern entry and a followed server’s entry are applied, a skipped message is never sent', async () => {
    expect((await run('autoread', 'add', [{ name: 'mp3', type: 5, value: true }], 'en-US', DEFAULT_IDS.chat)).content).toContain(
      'costs characters',
    );
    const replaced = await run('filter', 'add', [str('word', 'バカ')]);
    expect(replaced).toEqual({ content: 'フィルターを追加しました: 「バカ」は「ピー」と読みます。', flags: EPHEMERAL });
    expect((await run('filter', 'add', [str('word', 'r/死ね+/'), str('action', 'skip')], 'en-US')).content).toBe(
      'Filter added: messages containing “r/死ね+/” are not read aloud.',
    );
    // A pattern the safe engine refuses, refused with its reason.
    expect((await run('dictionary', 'add', [str('word', 'r/(a)\\1/'), str('reading', 'え')], 'en-US')).content).toBe(
      'Cannot add this entry: Backreferences (\\1 and the like) are not supported (at character 6).',
    );
    expect((await run('dictionary', 'add', [str('word', 'r/[0-9]+円/'), str('reading', 'いくらか')])).content).toContain('r/[0-9]+円/');
    // The other server shares its dictionary; this one follows it.
    await run('dictionary', 'add', [str('word', '猫'), str('reading', 'にゃんこ')], 'ja', otherGeneral);
    expect((await run('dictionary', 'share', [{ name: 'value', type: 5, value: true }], 'ja', otherGeneral)).content).toContain(
      'フォローできるようになりました',
    );
    expect((await run('dictionary', 'follow', [str('source', `guild:${other.id}`)])).content).toContain(
      `（ID ${other.id}）の辞書をフォローしました`,
    );

    const read = await spokenAround(() => post(carol, 'バカな猫が1200円'));
    expect(read).toContain('ピーなにゃんこがいくらか');
    expect(read).not.toContain('バカ');

    const skipped = await post(carol, 'お前なんか死ねええ');
    expect(await spokenAround(async () => {})).not.toContain('死ね');
    expect(texts(0)).not.toContain('死ね');
    await vi.waitUntil(() => discord.messages.some((m) => m.messageReference?.message_id === skipped.id), { timeout: 10_000 });
    expect(discord.messages.find((m) => m.messageReference?.message_id === skipped.id)!.content).toBe(
      'このメッセージは読み上げません: サーバーのフィルター（読まない語句）に当たります。',
    );
  }, 60_000);

  it('past the flood limit a member’s messages are not sent, and one line says how many', async () => {
    expect((await run('filter', 'flood', [{ name: 'messages', type: 4, value: 2 }])).content).toContain('1人10秒に2件');
    const before = standardRequests(emulator).length;
    for (const n of ['いち', 'に', 'さん', 'よん']) await post(dave, `連投${n}番目`);
    await vi.waitUntil(() => texts(before).includes('Daveさんの連投2件を省略しました。'), { timeout: 20_000, message: 'the summary' });
    expect(texts(before)).toContain('連投に番目');
    expect(texts(before)).not.toContain('連投さん番目');
    expect(texts(before)).not.toContain('連投よん番目');
    expect((await run('filter', 'flood', [{ name: 'messages', type: 4, value: 0 }], 'en-US')).content).toBe('The flood limit is off.');
  }, 30_000);

  it('a followed dictionary is read no more once unfollowed; a curated list is followed', async () => {
    expect((await run('dictionary', 'unfollow', [str('source', `guild:${other.id}`)], 'en-US')).content).toContain('No longer following');
    expect(await spokenAround(() => post(carol, '猫が寝た'))).toContain('猫が寝た');
    expect((await run('dictionary', 'follow', [str('source', 'gaming')])).content).toBe(
      '共有辞書「gaming」をフォローしました。このサーバーの辞書にない語句は、その辞書の読み方で読みます（このサーバーの辞書が優先）。',
    );
    expect(await spokenAround(() => post(carol, '乙でした'))).toContain('おつでした');
  }, 30_000);
});
