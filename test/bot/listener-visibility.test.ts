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

// What is read never tells listeners more than they could see, through `npm start` as a child
// process (loopback Discord, TLS voice server, emulator). #staffroom is hidden from @everyone and
// shown to the Moderator role (bob); #lobby is public. A channel mention is read by its name only
// when everyone who hears it can view that channel; join announcements leave out members the
// reading controls keep unread (muted, a never-read role). Its DATA_DIR was made 0755 beforehand.
const guildId = DEFAULT_IDS.guild;
const STAFF = '1100000000000000150';
const LOBBY = '1100000000000000151';
const QUIET_ROLE = '1100000000000000013';
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const carol = { id: '1000000000000000051', username: 'carol', globalName: 'かろる' };
const dave = { id: '1000000000000000052', username: 'dave', globalName: 'でいぶ' };
const erin = { id: '1000000000000000053', username: 'erin', globalName: 'えりん' };

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
