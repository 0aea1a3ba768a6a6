import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, PERMISSIONS, defaultGuild, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { startFakeVoiceServer, type FakeVoiceServer } from '@yomiage/local-discord';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';
import { standardRequests } from '../support/bot-harness.ts';

// What is read never tells listeners more than they could see, and nothing is read to an audience
// that cannot hear it, through `npm start` as a child process (loopback Discord, TLS voice server,
// emulator), one bot for the whole file. #staffroom is hidden from @everyone and shown to the
// Moderator role (bob); #lobby is public. A channel mention is read by its name only when everyone
// who hears it can view that channel; join announcements leave out members the reading controls keep
// unread (muted, a never-read role). A stage's audience is not heard: the bot becomes a speaker where
// it may (Mute Members there), else asks to speak and reads nothing until a stage moderator invites
// it (the stage tests run first and end with /leave). Its DATA_DIR was made 0755 beforehand.
const guildId = DEFAULT_IDS.guild;
const STAFF = '1100000000000000150';
const LOBBY = '1100000000000000151';
const QUIET_ROLE = '1100000000000000013';
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const carol = { id: '1000000000000000051', username: 'carol', globalName: 'かろる' };
const dave = { id: '1000000000000000052', username: 'dave', globalName: 'でいぶ' };
const erin = { id: '1000000000000000053', username: 'erin', globalName: 'えりん' };
const STAGE = '1100000000000000160';
const STAGE_MOD = '1100000000000000161';
const STAGE_CLOSED = '1100000000000000162';
const botId = DEFAULT_IDS.bot;

let emulator: Emulator;
let discord: FakeDiscord;
let voice: FakeVoiceServer;
let dataDir: string;
let bot: ChildBot;

function world() {
  const guild = defaultGuild();
  guild.roles.push({ id: QUIET_ROLE, name: 'Quiet', permissions: '0', position: 1 });
  guild.channels.push(
    {
      id: STAFF,
      name: 'staffroom',
      type: 0,
      position: 2,
      permissionOverwrites: [
        { id: DEFAULT_IDS.everyoneRole, type: 0, allow: '0', deny: String(PERMISSIONS.ViewChannel) },
        { id: DEFAULT_IDS.moderatorRole, type: 0, allow: String(PERMISSIONS.ViewChannel), deny: '0' },
      ],
    },
    { id: LOBBY, name: 'lobby', type: 0, position: 3 },
    { id: STAGE, name: 'Stage', type: 13, position: 4 },
    // The bot may make itself a speaker here.
    {
      id: STAGE_MOD,
      name: 'Moderated stage',
      type: 13,
      position: 5,
      permissionOverwrites: [{ id: botId, type: 1, allow: String(PERMISSIONS.MuteMembers), deny: '0' }],
    },
    // The bot may neither ask to speak nor make itself a speaker here.
    {
      id: STAGE_CLOSED,
      name: 'Closed stage',
      type: 13,
      position: 6,
      permissionOverwrites: [{ id: botId, type: 1, allow: '0', deny: String(PERMISSIONS.RequestToSpeak) }],
    },
  );
  guild.members.push({ user: carol, roles: [] }, { user: dave, roles: [] }, { user: erin, roles: [QUIET_ROLE] });
  return guild;
}

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  [emulator, discord] = await Promise.all([
    startEmulator({ control: true }),
    startFakeDiscord({ guilds: [world()], voiceEndpoint: () => voice.endpoint }),
  ]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-visibility-'));
  chmodSync(dataDir, 0o755);
  bot = await startChildBot({ discord, emulator, dataDir, caCertPem: voice.caCertPem, env: { AUTO_READ_MAX_AGE_SECONDS: '600' } });
  // Speed 4: clips a quarter as long, as voice plays in real time.
  await command(bob, 'config', [{ name: 'speed', type: 1, options: [{ name: 'value', type: 10, value: 4 }] }]);
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close(), voice?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

type Option = APIApplicationCommandInteractionDataOption;
async function command(
  user: { id: string; username: string },
  name: string,
  options: Option[] = [],
  channelId = DEFAULT_IDS.general as string,
) {
  const interaction = await discord.sendInteraction({ channelId, user, name, locale: 'en-US', options });
  const response = await interaction.waitForResponse((r) => r.kind === (name === 'join' ? 'editOriginal' : 'callback'), 30_000);
  return String(response.data?.content ?? '');
}
const sub = (name: string, options: Option[] = []) => [{ name, type: 1, options } as Option];

/** The text the emulator was asked to speak after `from` that contains `mark`. */
const spoken = (from: number, mark: string) =>
  vi.waitUntil(
    () =>
      standardRequests(emulator)
        .slice(from)
        .map((r) => r.text)
        .find((t) => t.includes(mark)),
    {
      timeout: 20_000,
      interval: 20,
      message: mark,
    },
  );
const texts = (from: number) =>
  standardRequests(emulator)
    .slice(from)
    .map((r) => r.text)
    .join('|');

/** A command by alice in #chat (the stage tests), answered by its reply or its edit. */
async function stageCommand(name: string, options: Option[] = [], locale = 'en-US') {
  const interaction = await discord.sendInteraction({ channelId: DEFAULT_IDS.chat, user: alice, name, locale, options });
  return interaction.waitForResponse((r) => r.kind === 'editOriginal' || (r.kind === 'callback' && r.type === 4), 30_000);
}
const botVoice = () => discord.guilds[0]!.voiceStates.find((v) => v.userId === botId);
const allTexts = () => standardRequests(emulator).map((r) => r.text);

describe('a stage channel', () => {
  it("refuses privately, in the member's language, where the bot may neither ask to speak nor become a speaker", async () => {
    await discord.setVoiceState(alice.id, guildId, STAGE_CLOSED);
    const reply = await stageCommand('join', [], 'ja');
    expect(reply.kind).toBe('callback');
    expect(Number(reply.data?.flags ?? 0) & 64).toBe(64);
    expect(String(reply.data?.content)).toContain('スピーカー参加をリクエスト');
    expect(botVoice()).toBeUndefined();
  });

  it('without Mute Members: asks to speak, says it is waiting, reads nothing and attaches /say until invited to speak', async () => {
    await discord.setVoiceState(alice.id, guildId, STAGE);
    const reply = await stageCommand('join');
    expect(String(reply.data?.content)).toContain('Waiting to be made a speaker: a stage moderator can invite me to speak');
    await vi.waitFor(() => expect(botVoice()?.requestToSpeakTimestamp).toEqual(expect.any(String)), { timeout: 10_000 });
    expect(botVoice()).toMatchObject({ channelId: STAGE, suppress: true });

    // In the audience: the chat is not synthesised (no characters for nobody); /say comes back as a file.
    await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: '聴衆のあいだのひとこと' });
    const say = await discord.sendInteraction({
      channelId: DEFAULT_IDS.chat,
      user: alice,
      name: 'say',
      locale: 'en-US',
      options: [{ name: 'text', type: 3, value: '客席から添付で' }],
    });
    await say.waitForResponse((r) => r.files.length > 0 || (r.message?.attachments.length ?? 0) > 0, 30_000);

    // A stage moderator invites the bot to speak: from then on the chat is read aloud in the stage.
    discord.setStageSpeaker(guildId, botId, true);
    await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: '登壇してからのひとこと' });
    await vi.waitUntil(() => allTexts().some((t) => t.includes('登壇してからのひとこと')), { timeout: 20_000, interval: 20 });
    const heard = await voice.waitForAudio({ guildId });
    expect(heard.durationMs).toBeGreaterThan(0);
    expect(allTexts().some((t) => t.includes('聴衆のあいだ'))).toBe(false);

    // Moved back to the audience with lines waiting: the text channel is told why reading stopped,
    // and what waited is dropped, never made (no characters for nobody) nor posted. Proof: once a
    // speaker again, the next line is asked for without them (one queue, in order).
    emulator.setLatency('standard', 1_500);
    const before = allTexts().length;
    await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: '戻される前の先頭' });
    await vi.waitUntil(
      () =>
        allTexts()
          .slice(before)
          .some((t) => t.includes('戻される前の先頭')),
      { timeout: 20_000, interval: 20 },
    );
    for (const n of ['一', '二', '三'])
      await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: `待っていた発言${n}` });
    await stageCommand('help'); // handled in order: the three are queued by now
    discord.setStageSpeaker(guildId, botId, false);
    const notice = await discord.waitForMessage((m) => m.channelId === DEFAULT_IDS.chat && m.content.includes('聴衆に戻された'));
    expect(notice.content).toContain(`<#${STAGE}>`);
    emulator.setLatency('standard', 0);
    discord.setStageSpeaker(guildId, botId, true);
    await vi.waitFor(() => expect(botVoice()).toMatchObject({ suppress: false }), { timeout: 10_000 });
    await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: 'ふたたび登壇して' });
    await vi.waitUntil(
      () =>
        allTexts()
          .slice(before)
          .some((t) => t.includes('ふたたび登壇して')),
      { timeout: 20_000, interval: 20 },
    );
    expect(
      allTexts()
        .slice(before)
        .filter((t) => t.includes('待っていた発言')),
    ).toEqual([]);
  });

  it('with Mute Members there: becomes a speaker at once', async () => {
    await discord.setVoiceState(alice.id, guildId, STAGE_MOD);
    const reply = await stageCommand('join');
    expect(String(reply.data?.content)).toContain('Joined');
    expect(String(reply.data?.content)).not.toContain('Waiting');
    await vi.waitFor(() => expect(botVoice()).toMatchObject({ channelId: STAGE_MOD, suppress: false }), { timeout: 10_000 });
    await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: 'すぐ話せるステージ' });
    await vi.waitUntil(() => allTexts().some((t) => t.includes('すぐ話せるステージ')), { timeout: 20_000, interval: 20 });
  });

  // The tests below start with the bot in no voice channel.
  afterAll(async () => {
    await stageCommand('leave');
    await vi.waitFor(() => expect(botVoice()).toBeUndefined(), { timeout: 10_000 });
  });
});

describe('a channel is named only to listeners who can all view it', () => {
  it('MP3 channels: in a public one a staff-only channel is "チャンネル", a public one its name; among staff, its name', async () => {
    await command(bob, 'autoread', sub('add', [{ name: 'mp3', type: 5, value: true }]), DEFAULT_IDS.chat);
    await command(bob, 'autoread', sub('add', [{ name: 'mp3', type: 5, value: true }]), STAFF);
    const before = standardRequests(emulator).length;
    await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: `公開で<#${STAFF}>と<#${LOBBY}>の話` });
    const inPublic = await spoken(before, '公開で');
    expect(inPublic).toContain('チャンネル');
    expect(inPublic).toContain('lobby');
    expect(inPublic).not.toContain('staffroom');
    await discord.sendMessage({ channelId: STAFF, author: bob, content: `スタッフ向けに<#${STAFF}>の話` });
    expect(await spoken(before, 'スタッフ向けに')).toContain('staffroom');
  });

  it("an MP3 channel's message queued with no voice session, the bot /joined before it is delivered: posted there, not played", async () => {
    const before = standardRequests(emulator).length;
    // A slow first line holds the queue; the second waits behind it, made for #chat's file post.
    emulator.setLatency('standard', 2_000);
    await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: bob, content: 'ファイルで先に読む話' });
    await spoken(before, 'ファイルで先に読む話');
    const waiting = await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: bob, content: 'ファイルで待つ話' });
    await discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
    voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
    expect(await command(alice, 'join')).toContain('Joined');
    emulator.setLatency('standard', 0);
    await voice.waitForDave(guildId);
    const posted = await vi.waitUntil(
      () => discord.messages.find((m) => m.messageReference?.message_id === waiting.id && m.attachments.length > 0),
      {
        timeout: 20_000,
        interval: 20,
        message: 'the waiting line posted in #chat',
      },
    );
    expect(posted.channelId).toBe(DEFAULT_IDS.chat);
  });

  it('voice: with a member in the call who cannot view it, a mention of it says "チャンネル"; its own messages are never read there', async () => {
    // In voice with alice since the test before.
    const before = standardRequests(emulator).length;
    await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: bob, content: `通話中に<#${STAFF}>と<#${LOBBY}>の話` });
    const inVoice = await spoken(before, '通話中に');
    expect(inVoice).toContain('チャンネル');
    expect(inVoice).toContain('lobby');
    expect(inVoice).not.toContain('staffroom');
    // #staffroom posts MP3s: its message is made for #staffroom only (posted there), never played to alice.
    const staffLine = await discord.sendMessage({ channelId: STAFF, author: bob, content: 'スタッフだけの相談です' });
    const posted = await vi.waitUntil(
      () => discord.messages.find((m) => m.messageReference?.message_id === staffLine.id && m.attachments.length > 0),
      {
        timeout: 20_000,
        interval: 20,
        message: 'the staff line posted in #staffroom',
      },
    );
    expect(posted.channelId).toBe(STAFF);
    expect(
      standardRequests(emulator)
        .slice(before)
        .filter((r) => r.text.includes('スタッフだけ') && r.text.includes('通話中に')),
    ).toEqual([]);
    // An auto-read channel without MP3 posts: not read at all, and its author is told why.
    expect(await command(bob, 'autoread', sub('add', [{ name: 'mp3', type: 5, value: false }]), STAFF)).not.toContain('costs characters');
    const quiet = await discord.sendMessage({ channelId: STAFF, author: bob, content: '読まれない相談です' });
    const told = await vi.waitUntil(() => discord.messages.find((m) => m.messageReference?.message_id === quiet.id), {
      timeout: 20_000,
      interval: 20,
      message: 'the author told',
    });
    expect(told.content).toContain(`<#${DEFAULT_IDS.voice}>`);
    expect(texts(before)).not.toContain('読まれない');
  });
});

describe('join announcements', () => {
  it('a muted member and one with a never-read role join unannounced; another member is announced', async () => {
    await command(bob, 'config', sub('announce', [{ name: 'value', type: 5, value: true }]));
    await command(
      bob,
      'config',
      sub('mute', [
        { name: 'member', type: 6, value: dave.id },
        { name: 'muted', type: 5, value: true },
      ]),
    );
    await command(bob, 'reading', sub('never-role-add', [{ name: 'role', type: 8, value: QUIET_ROLE }]));
    const before = standardRequests(emulator).length;
    await discord.setVoiceState(dave.id, guildId, DEFAULT_IDS.voice);
    await discord.setVoiceState(erin.id, guildId, DEFAULT_IDS.voice);
    await discord.setVoiceState(carol.id, guildId, DEFAULT_IDS.voice);
    expect(await spoken(before, 'かろる')).toContain('入室しました');
    expect(texts(before)).not.toMatch(/でいぶ|えりん/);
  });
});

describe('the call is checked again when the audio is delivered', () => {
  it('a staff line queued while only staff listened, then a member who cannot view it joins: posted in #staffroom, not played', async () => {
    expect(await command(bob, 'autoread', sub('add', [{ name: 'mp3', type: 5, value: true }]), STAFF)).toContain('costs characters');
    // No join announcement to read along with the staff line.
    await command(bob, 'config', sub('announce', [{ name: 'value', type: 5, value: false }]));
    await discord.setVoiceState(bob.id, guildId, DEFAULT_IDS.voice);
    for (const member of [alice, carol, dave, erin]) await discord.setVoiceState(member.id, guildId, null);
    const before = standardRequests(emulator).length;
    // A slow first line holds the queue; the staff line waits behind it while only bob (staff) listens.
    emulator.setLatency('standard', 1_000);
    await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: bob, content: '先に読むロビーの話' });
    await spoken(before, '先に読むロビーの話');
    const staffLine = await discord.sendMessage({ channelId: STAFF, author: bob, content: '待っているスタッフの相談' });
    await discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
    emulator.setLatency('standard', 0);
    const posted = await vi.waitUntil(
      () => discord.messages.find((m) => m.messageReference?.message_id === staffLine.id && m.attachments.length > 0),
      {
        timeout: 20_000,
        interval: 20,
        message: 'the staff line posted in #staffroom',
      },
    );
    expect(posted.channelId).toBe(STAFF);
    expect(texts(before)).toContain('待っているスタッフの相談');
  });
});

describe('DATA_DIR after start', () => {
  it('is owner-only, the database files too, and the narrowing was logged once', () => {
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const files = readdirSync(dataDir).filter((f) => f.startsWith('bot.sqlite3'));
    expect(files).toContain('bot.sqlite3');
    for (const f of files) expect([f, statSync(join(dataDir, f)).mode & 0o777]).toEqual([f, 0o600]);
    expect(bot.logs.filter((l) => l.msg === 'data directory permissions narrowed to owner-only')).toEqual([
      expect.objectContaining({ level: 30, paths: [{ path: dataDir, from: '0755', to: '0700' }] }),
    ]);
  });
});
