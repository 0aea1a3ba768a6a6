import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { defaultGuild, guildOnShard } from '@yomiage/local-discord/fixtures';
import type { DashboardServer } from '../../src/dashboard/server.ts';
import { SHORT_TONES, standardRequests, startHarness, type Harness } from '../support/bot-harness.ts';
import { approveAtLocalDiscord, DashboardClient, startHarnessDashboard } from '../support/dashboard-client.ts';

// Filters against 荒らし and shared dictionaries, in process against the loopback Discord and the
// emulator: who may set them (Manage Server, as /config), a filtered word read as another, a skipped
// message never sent to the service (its author told once, then a reaction), /say refused, the flood
// limit's summary; a server following another's dictionary (offered only to an admin in it) and a
// curated list, read live and then no more; and the same settings through the web dashboard. #chat
// is an auto-read channel with MP3 posts, so every message read is one request the emulator logs;
// "not sent" is shown by a later marker message being sent while the first one never was.
const alice = { id: DEFAULT_IDS.alice, username: 'alice', globalName: 'Alice' }; // no special permission
const bob = { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' }; // Moderator: Manage Server
const carol = { id: '1000000000000000031', username: 'carol' };
const guildId = DEFAULT_IDS.guild;
const EPHEMERAL = 64;
// Two more servers with the bot: bob is in "Shard 0 Guild 1" (an admin there too), not in the third.
const other = guildOnShard(0, 1, 1);
const notHis = guildOnShard(0, 1, 2);
notHis.members = notHis.members.filter((m) => m.user.id !== bob.id);
const generalOf = (g: typeof other) => g.channels.find((c) => c.name === 'general')!.id;

let h: Harness;
let dashboard: DashboardServer;
let curatedDir: string;
beforeAll(async () => {
  const rate = { standard: { limit: 1000, windowMs: 60_000 }, advanced: { limit: 1000, windowMs: 60_000 } };
  curatedDir = mkdtempSync(join(tmpdir(), 'yomiage-curated-'));
  writeFileSync(join(curatedDir, 'gaming.tsv'), '乙\tおつ\n');
  h = await startHarness({
    discord: { guilds: [defaultGuild(), other, notHis] },
    env: { AUTO_READ_MAX_AGE_SECONDS: '600', CURATED_DICTIONARIES_DIR: curatedDir },
    emulator: { ...SHORT_TONES, rate },
    bot: { rateLimits: rate, floodQuietMs: 300 },
  });
  dashboard = await startHarnessDashboard(h);
  const add = await run(bob, 'autoread', sub('add', [{ name: 'mp3', type: 5, value: true }]), 'en-US', DEFAULT_IDS.chat);
  expect(add.content).toContain('costs characters');
}, 60_000);
afterAll(async () => {
  await dashboard?.close();
  await h?.close();
  rmSync(curatedDir, { recursive: true, force: true });
});

async function run(
  user: { id: string; username: string },
  name: string,
  options: APIApplicationCommandInteractionDataOption[],
  locale = 'en-US',
  channelId: string = DEFAULT_IDS.general,
) {
  const interaction = await h.discord.sendInteraction({ channelId, user, name, locale, options });
  const reply = await interaction.waitForResponse((r) => r.kind === 'callback' || r.kind === 'editOriginal', 20_000);
  return { content: String(reply.data?.content ?? ''), flags: reply.data?.flags, interaction };
}
const sub = (name: string, options: unknown[] = []): APIApplicationCommandInteractionDataOption[] => [
  { name, type: 1, options } as APIApplicationCommandInteractionDataOption,
];
const str = (name: string, value: string) => ({ name, type: 3, value });
const texts = (from: number) =>
  standardRequests(h.emulator)
    .slice(from)
    .map((r) => r.text);

let marker = 0;
/** Sends `send`, then a marker message; the texts the emulator was asked to speak from `send` up to the marker. */
async function spokenAround(send: () => Promise<unknown>): Promise<string[]> {
  const before = standardRequests(h.emulator).length;
  await send();
  const mark = `目印${++marker}番です`;
  await h.discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: carol, content: mark });
  return vi.waitUntil(() => (texts(before).some((t) => t.includes(mark)) ? texts(before) : undefined), {
    timeout: 20_000,
    interval: 20,
    message: `the marker ${mark}`,
  });
}
const post = (author: { id: string; username: string }, content: string) =>
  h.discord.sendMessage({ channelId: DEFAULT_IDS.chat, author, content });
/** Apps > Why wasn't this read? on a message of #chat, asked by its author: the private answer. */
async function why(messageId: string, locale: string): Promise<string> {
  const i = await h.discord.sendInteraction({
    channelId: DEFAULT_IDS.chat,
    user: carol,
    name: "Why wasn't this read?",
    locale,
    target: { messageId },
  });
  return String((await i.waitForResponse((r) => r.kind === 'callback', 20_000)).data?.content ?? '');
}

describe('filters: who may set them', () => {
  it('a member without Manage Server is refused, in their language, and nothing changes', async () => {
    const en = await run(alice, 'filter', sub('add', [str('word', 'バカ')]));
    expect(en.content).toBe('You need the Manage Server permission to use this command.');
    const ja = await run(alice, 'filter', sub('flood', [{ name: 'messages', type: 4, value: 3 }]), 'ja');
    expect(ja.content).toBe('このコマンドには「サーバー管理」権限が必要です。');
    expect(h.bot.context.repos.filters.own(guildId)).toEqual([]);
    expect(h.bot.context.repos.filters.settings(guildId).floodMax).toBeNull();
  });
});

describe('filters: what is read', () => {
  it('a replaced word is read as the admin’s word; the reply is private and in the admin’s language', async () => {
    const added = await run(bob, 'filter', sub('add', [str('word', 'バカ')]), 'ja');
    expect(added.flags).toBe(EPHEMERAL);
    expect(added.content).toBe('フィルターを追加しました: 「バカ」は「ピー」と読みます。');
    const spoken = await spokenAround(() => post(carol, 'あいつはバカだな'));
    expect(spoken.join('|')).toContain('あいつはピーだな');
    expect(spoken.join('|')).not.toContain('バカ');
  });

  it('a skipped message is never sent to the service; its author is told once, then sees a reaction', async () => {
    const added = await run(bob, 'filter', sub('add', [str('word', 'r/死ね+/'), str('action', 'skip')]));
    expect(added.content).toBe('Filter added: messages containing “r/死ね+/” are not read aloud.');
    const requestsBefore = standardRequests(h.emulator).length;
    const first = await post(carol, 'お前なんか死ねええ');
    const second = await post(carol, 'しつこく死ねねね');
    const spoken = await spokenAround(async () => {});
    expect(spoken.join('|')).not.toContain('死ね');
    expect(texts(requestsBefore).join('|')).not.toContain('死ね');
    // Told once, as a reply in the server's language; the second gets the 🔇 reaction.
    const notices = () => h.discord.messages.filter((m) => m.source === 'channel' && m.messageReference?.message_id === first.id);
    await vi.waitUntil(() => notices().length === 1 && h.discord.reactions.some((r) => r.messageId === second.id), {
      timeout: 10_000,
      message: 'the notice and the reaction',
    });
    expect(notices()[0]!.content).toBe('このメッセージは読み上げません: サーバーのフィルター（読まない語句）に当たります。');
    expect(h.discord.messages.some((m) => m.messageReference?.message_id === second.id)).toBe(false);
    // Why wasn't this read? says so, in the asker's language.
    expect(await why(first.id, 'ja')).toContain('読み上げなし: サーバーのフィルター（読まない語句）に当たりました');
    expect(await why(second.id, 'en-US')).toContain("not read: it matches one of the server's filters (words never read)");
  });

  it('/say with a filtered word is refused privately in the member’s language, nothing sent; a replaced word is said as replaced', async () => {
    const before = standardRequests(h.emulator).length;
    const en = await run(alice, 'say', [str('text', '死ねばいい') as APIApplicationCommandInteractionDataOption]);
    expect(en.flags).toBe(EPHEMERAL);
    expect(en.content).toBe(
      "This cannot be read aloud: it matches one of the server's filters (words that are never read). Nothing was sent.",
    );
    const ja = await run(alice, 'say', [str('text', '死ねばいい') as APIApplicationCommandInteractionDataOption], 'ja');
    expect(ja.content).toBe('読み上げられません: サーバーのフィルター（読まない語句）に当たります。何も送っていません。');
    expect(texts(before)).toEqual([]);
    const said = await run(alice, 'say', [str('text', 'バカって言った') as APIApplicationCommandInteractionDataOption]);
    await said.interaction.waitForResponse((r) => r.files.length > 0, 20_000);
    expect(texts(before)).toEqual(['ピーって言った']);
  });
});

describe('filters: the flood limit', () => {
  it('past 2 messages in 10 s a member’s messages are not sent, and one line says how many were skipped', async () => {
    const set = await run(bob, 'filter', sub('flood', [{ name: 'messages', type: 4, value: 2 }]), 'ja');
    expect(set.content).toContain('1人10秒に2件');
    const dave = { id: '1000000000000000044', username: 'dave', globalName: 'Dave' };
    const before = standardRequests(h.emulator).length;
    const flooded = [];
    for (const n of ['いち', 'に', 'さん', 'よん', 'ご']) flooded.push(await post(dave, `連投${n}番目`));
    const summary = 'Daveさんの連投3件を省略しました。';
    await vi.waitUntil(() => texts(before).some((t) => t.includes(summary)), { timeout: 20_000, message: 'the summary' });
    const spoken = texts(before).join('|');
    expect(spoken).toContain('連投いち番目');
    expect(spoken).toContain('連投に番目');
    for (const n of ['さん', 'よん', 'ご']) expect(spoken).not.toContain(`連投${n}番目`);
    expect(await why(flooded.at(-1)!.id, 'en-US')).toContain('wrote more than 2 messages in 10 seconds');
    // Another member is read as ever.
    expect((await spokenAround(() => post(carol, '私は普通に話します'))).join('|')).toContain('私は普通に話します');
    await run(bob, 'filter', sub('flood', [{ name: 'messages', type: 4, value: 0 }]));
  });
});

describe('filters: the dashboard', () => {
  it('an admin adds, lists and removes filters and sets the flood limit with the same rules; a member is refused', async () => {
    const signIn = async (userId: string) => {
      const client = new DashboardClient(dashboard.url);
      await client.signIn((url) => approveAtLocalDiscord(url, userId));
      return client;
    };
    const admin = await signIn(bob.id);
    const path = `/guilds/${guildId}/filters`;
    const jaCall = (method: string, json: unknown) =>
      admin.request(`/api${path}${method === 'PUT' ? '/flood' : ''}`, { method, json, headers: { 'x-lang': 'ja' } });
    const added = await jaCall('POST', { word: 'アホ', action: 'replace', reading: 'ブー' });
    expect(added.status).toBe(201);
    expect(added.body.entries.map((e: { word: string }) => e.word)).toContain('アホ');
    const refused = await jaCall('POST', { word: 'r/(?=x)y/' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('フィルターに追加できません: 先読み・後読み（(?= など）は使えません（3文字目）。');
    const flood = await jaCall('PUT', { messages: 31 });
    expect(flood.body.message).toBe('連投の上限は2〜30件（0で上限なし）で指定してください。何も変更していません。');
    expect((await jaCall('PUT', { messages: 5 })).body.floodMax).toBe(5);
    expect((await admin.api('GET', `/guilds/${guildId}`)).body.filters.floodMax).toBe(5);
    // What the next message reads follows at once.
    expect((await spokenAround(() => post(carol, 'アホかいな'))).join('|')).toContain('ブーかいな');
    expect((await admin.api('DELETE', path, { word: 'アホ' })).status).toBe(200);
    const audit = (await admin.api('GET', `/guilds/${guildId}/audit`)).body as { action: string; text: string }[];
    expect(audit.slice(0, 3).map((e) => e.action)).toEqual(['filter.remove', 'filter.flood', 'filter.add']);
    // A member without Manage Server: 403, nothing changed.
    const member = await signIn(alice.id);
    expect((await member.api('POST', path, { word: 'なにか' })).status).toBe(403);
    expect((await member.api('PUT', `${path}/flood`, { messages: 2 })).status).toBe(403);
    expect(h.bot.context.repos.filters.settings(guildId).floodMax).toBe(5);
    await admin.api('PUT', `${path}/flood`, { messages: 0 });
  });
});

describe('shared dictionaries', () => {
  const owner = { id: DEFAULT_IDS.owner, username: 'owner' };
  const bool = (value: boolean) => [{ name: 'value', type: 5, value }];
  const entry = (word: string, reading: string) => [str('word', word), str('reading', reading)];
  const choices = async (user: { id: string; username: string }, subName: 'follow' | 'unfollow', locale = 'ja') => {
    const i = await h.discord.sendInteraction({
      type: 4,
      channelId: DEFAULT_IDS.general,
      user,
      name: 'dictionary',
      locale,
      options: [{ name: subName, type: 1, options: [{ name: 'source', type: 3, value: '', focused: true }] }] as never,
    });
    return (await i.waitForResponse((r) => r.kind === 'callback', 10_000)).data?.choices as { name: string; value: string }[];
  };

  it('a server follows another’s shared dictionary, offered only to an admin who is in it, read live under its own, then no more', async () => {
    // Sharing is for admins, said in the member's language.
    expect((await run(alice, 'dictionary', sub('share', bool(true)), 'ja')).content).toBe(
      'このコマンドには「サーバー管理」権限が必要です。',
    );
    // The other servers' admins share their dictionaries.
    await run(bob, 'dictionary', sub('add', entry('猫', 'にゃんこ')), 'ja', generalOf(other));
    expect((await run(bob, 'dictionary', sub('share', bool(true)), 'ja', generalOf(other))).content).toContain(
      'フォローできるようになりました',
    );
    await run(owner, 'dictionary', sub('add', entry('鳥', 'とりさん')), 'ja', generalOf(notHis));
    await run(owner, 'dictionary', sub('share', bool(true)), 'en', generalOf(notHis));
    // Offered: the server bob is in and the curated list, never the one he is not in; to a member, nothing.
    const offered = await choices(bob, 'follow');
    expect(offered.map((c) => c.value)).toEqual([`guild:${other.id}`, 'curated:gaming']);
    expect(offered[0]!.name).toBe(`サーバー「${other.name}」（ID ${other.id}）の辞書`);
    expect(await choices(alice, 'follow')).toEqual([]);
    const followed = await run(bob, 'dictionary', sub('follow', [str('source', `guild:${other.id}`)]), 'ja');
    expect(followed.flags).toBe(EPHEMERAL);
    expect(followed.content).toContain(`サーバー「${other.name}」（ID ${other.id}）の辞書をフォローしました`);
    // The server bob is not in, by its id: followed (its admins share it), never named to him.
    const byId = await run(bob, 'dictionary', sub('follow', [str('source', notHis.id)]));
    expect(byId.content).toBe(
      `Now following the server ${notHis.id}: words this server's dictionary does not have are read with its readings (this server's own entries come first).`,
    );
    expect(byId.content).not.toContain(notHis.name);
    const list = await run(bob, 'dictionary', sub('follows'));
    expect(list.content).toContain(`the server "${other.name}" (${other.id})`);
    expect(list.content).not.toContain(notHis.name);
    // Read with the followed dictionaries; this server's own entry wins.
    await run(bob, 'dictionary', sub('add', entry('鳥', 'からす')));
    expect((await spokenAround(() => post(carol, '猫と鳥がいる'))).join('|')).toContain('にゃんことからすがいる');
    // A change there is read at once; unsharing there stops it here.
    await run(bob, 'dictionary', sub('add', entry('犬', 'わんこ')), 'ja', generalOf(other));
    expect((await spokenAround(() => post(carol, '犬もいる'))).join('|')).toContain('わんこもいる');
    await run(bob, 'dictionary', sub('share', bool(false)), 'en', generalOf(other));
    expect((await spokenAround(() => post(carol, '猫はどこ'))).join('|')).toContain('猫はどこ');
    expect((await run(bob, 'dictionary', sub('follows'))).content).toContain('(not read now: no longer shared, or gone)');
    // Unfollowed: read without it even once shared again.
    await run(bob, 'dictionary', sub('share', bool(true)), 'en', generalOf(other));
    const unfollowed = await run(bob, 'dictionary', sub('unfollow', [str('source', `guild:${other.id}`)]), 'ja');
    expect(unfollowed.content).toBe(`サーバー「${other.name}」（ID ${other.id}）の辞書のフォローをやめました。`);
    expect((await spokenAround(() => post(carol, '猫が寝た'))).join('|')).toContain('猫が寝た');
    await run(bob, 'dictionary', sub('unfollow', [str('source', notHis.id)]));
    // A server that does not share: refused, as one that does not exist.
    const refused = await run(bob, 'dictionary', sub('follow', [str('source', '19999999999999999')]), 'ja');
    expect(refused.content).toContain('サーバー（ID 19999999999999999）の辞書はフォローできません');
  });

  it('the dashboard: an admin follows a curated list and unfollows it with the same rules; offered only servers they are in', async () => {
    const signIn = async (userId: string) => {
      const client = new DashboardClient(dashboard.url);
      await client.signIn((url) => approveAtLocalDiscord(url, userId));
      return client;
    };
    const admin = await signIn(bob.id);
    const view = (await admin.api('GET', `/guilds/${guildId}`)).body.sharing;
    expect(view.available.map((a: { kind: string; source: string }) => `${a.kind}:${a.source}`)).toEqual([
      `guild:${other.id}`,
      'curated:gaming',
    ]);
    const path = `/guilds/${guildId}/dictionary/follows`;
    const followed = await admin.api('POST', path, { source: 'curated:gaming' });
    expect(followed.body.follows).toEqual([{ kind: 'curated', source: 'gaming', name: 'gaming', active: true }]);
    expect((await spokenAround(() => post(carol, '乙でした'))).join('|')).toContain('おつでした');
    const unknown = await admin.request(`/api${path}`, { method: 'POST', json: { source: 'anime' }, headers: { 'x-lang': 'ja' } });
    expect(unknown.body.message).toBe('共有辞書「anime」はありません。何も変更していません。');
    expect((await admin.api('DELETE', path, { source: 'curated:gaming' })).body.follows).toEqual([]);
    expect((await spokenAround(() => post(carol, '乙です'))).join('|')).toContain('乙です');
    const shared = await admin.api('PUT', `/guilds/${guildId}/dictionary/sharing`, { followable: true });
    expect(shared.body.followable).toBe(true);
    // A member without Manage Server: 403, nothing changed.
    const member = await signIn(alice.id);
    expect((await member.api('POST', path, { source: 'curated:gaming' })).status).toBe(403);
    expect((await member.api('PUT', `/guilds/${guildId}/dictionary/sharing`, { followable: false })).status).toBe(403);
    expect(h.bot.context.repos.sharing.follows(guildId)).toEqual([]);
    expect(h.bot.context.repos.sharing.isFollowable(guildId)).toBe(true);
  });
});
