import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import { openDatabase } from '../../src/db/database.ts';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { startFakeVoiceServer, type FakeVoiceServer } from '@yomiage/local-discord';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';
import { VOICE_IDS, voicePermissionsWorld } from '@yomiage/local-discord/test/voice-permissions-world';

// Who may move or stop the bot, and why it is silent, through `npm start` as a child process (one
// bot for the file: each start costs about a CPU-second of the suite) against the loopback Discord,
// whose channels carry Discord's permission overwrites and user limits
// (packages/local-discord/test/voice-permissions-world.ts; its Quiet channel denies the bot Speak),
// the fake TLS voice server with DAVE and the emulator.
const guildId = DEFAULT_IDS.guild;
const alice = { id: DEFAULT_IDS.alice, username: 'alice', globalName: 'Alice' }; // no special permission
const bob = { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' }; // Moderator: Move Members, Manage Server
const carol = { id: VOICE_IDS.carol, username: 'carol', globalName: 'Carol' }; // no special permission
const EPHEMERAL = 64;

let emulator: Emulator;
let discord: FakeDiscord;
let voice: FakeVoiceServer;
let dataDir: string;
let bot: ChildBot;
beforeAll(async () => {
  voice = await startFakeVoiceServer();
  [emulator, discord] = await Promise.all([
    startEmulator({ control: true }),
    startFakeDiscord({ voiceEndpoint: () => voice.endpoint, guilds: [voicePermissionsWorld()] }),
  ]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-voice-permissions-'));
  bot = await startChildBot({ discord, emulator, dataDir, caCertPem: voice.caCertPem });
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close(), voice?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

type User = { id: string; username: string; globalName?: string };
async function run(user: User, name: string, options: { channel?: string; locale?: string; from?: string } = {}) {
  const i = await discord.sendInteraction({
    channelId: options.from ?? DEFAULT_IDS.general,
    user,
    name,
    locale: options.locale ?? 'en-US',
    ...(options.channel ? { options: [{ name: 'channel', type: 7, value: options.channel }] } : {}),
  });
  const first = await i.waitForResponse((r) => r.kind === 'callback', 15_000);
  return { i, first, text: String(first.data?.content ?? '') };
}
/** A refusal: ephemeral, and what it says. */
async function refused(user: User, name: string, options: { channel?: string; locale?: string; from?: string } = {}): Promise<string> {
  const { first, text } = await run(user, name, options);
  expect(first.data?.flags, `/${name} answered "${text}"`).toBe(EPHEMERAL);
  return text;
}
const botChannel = () => discord.guilds[0]!.voiceStates.find((v) => v.userId === DEFAULT_IDS.bot)?.channelId ?? null;
const mention = (id: string) => `<#${id}>`;
/** The voice session the bot remembers (its voice channel and bound text channel), read from its database file. */
function remembered(): { voice: string; text: string | null } | null {
  const db = openDatabase(join(dataDir, 'bot.sqlite3'), { migrate: false });
  try {
    const row = db.prepare('SELECT voice_channel_id AS voice, text_channel_id AS text FROM voice_sessions WHERE guild_id = ?').get(guildId);
    return (row as { voice: string; text: string | null } | undefined) ?? null;
  } finally {
    db.close();
  }
}
const READING_GENERAL = { voice: DEFAULT_IDS.voice, text: DEFAULT_IDS.general };

// Why the bot is silent: a member asks /diagnose and, from a message's menu, "Why wasn't this
// read?"; the details of each cause are tested in-process (diagnose.test.ts).
async function diagnose(user: User, locale: string, channelId: string = DEFAULT_IDS.general): Promise<string> {
  const i = await discord.sendInteraction({ channelId, user, name: 'diagnose', locale });
  expect((await i.waitForResponse((r) => r.kind === 'callback', 20_000)).data?.flags, 'private').toBe(64);
  return String((await i.waitForResponse((r) => r.kind === 'editOriginal', 20_000)).data?.content ?? '');
}
/** Asks "Why wasn't this read?" about a message until the answer says `expected` (the bot decides as it reads). */
async function whyUntil(user: User, messageId: string, locale: string, expected: string): Promise<string> {
  return vi.waitUntil(
    async () => {
      const i = await discord.sendInteraction({
        channelId: DEFAULT_IDS.general,
        user,
        name: "Why wasn't this read?",
        locale,
        target: { messageId },
      });
      const answer = await i.waitForResponse((r) => r.kind === 'callback', 20_000);
      expect(answer.data?.flags, 'private').toBe(64);
      const said = String(answer.data?.content ?? '');
      return said.includes(expected) ? said : undefined;
    },
    { timeout: 30_000, interval: 300, message: `"${expected}" in the answer` },
  );
}
const write = async (author: User, content: string) => (await discord.sendMessage({ channelId: DEFAULT_IDS.general, author, content })).id;
const voiceChannel = `<#${DEFAULT_IDS.voice}>`;
/** Alice, listening in #Voice, has the bot join her there by /join (end-to-end encrypted). */
async function aliceCallsTheBot(): Promise<void> {
  await discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
  voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
  const joined = await discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'join', locale: 'en-US' });
  expect(String((await joined.waitForResponse((r) => r.kind === 'editOriginal', 30_000)).data?.content)).toContain('Joined');
  await voice.waitForDave(guildId);
}

describe('why the bot is silent, through npm start', () => {
  it('/diagnose from a voice channel where the bot may not speak: Speak is missing and nobody would hear it (ja)', async () => {
    await discord.setVoiceState(carol.id, guildId, VOICE_IDS.quiet);
    const said = await diagnose(carol, 'ja', DEFAULT_IDS.chat);
    expect(said).toContain(`❌ <#${VOICE_IDS.quiet}> でボットに足りない権限:\n・発言: 参加はできても、声が誰にも届きません`);
    expect(said).toContain('❌ このチャンネルは読み上げていません。');
    await discord.setVoiceState(carol.id, guildId, null);
  });

  it("a message read in the call: when and where (en); a muted member's: why not (ja)", async () => {
    await aliceCallsTheBot();
    const read = await write(alice, 'こんにちは');
    expect(await whyUntil(carol, read, 'en-US', '** read in')).toMatch(
      new RegExp(`^\\*\\*This message:\\*\\* read in ${voiceChannel} <t:\\d+:T>$`),
    );
    const mute: APIApplicationCommandInteractionDataOption[] = [
      {
        name: 'mute',
        type: 1,
        options: [
          { name: 'member', type: 6, value: carol.id },
          { name: 'muted', type: 5, value: true },
        ],
      },
    ];
    const muting = await discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: bob,
      name: 'config',
      locale: 'ja',
      options: mute,
    });
    await muting.waitForResponse((r) => r.kind === 'callback', 20_000);
    const muted = await write(carol, 'ミュート中の発言');
    expect(await whyUntil(alice, muted, 'ja', 'ミュート')).toBe(
      '**このメッセージ:** 読み上げていません: 投稿者は読み上げをミュートされています（/設定 ミュート）',
    );
  });

  it('a gateway that sends no message content: the message says so (en), and /diagnose names the switch (ja)', async () => {
    discord.setMessageContent(false);
    try {
      const blank = await write(alice, '本文のある発言');
      const said = await whyUntil(alice, blank, 'en-US', 'no text');
      expect(said).toContain('not read: it reached the bot with no text (Discord did not send the message content)');
      expect(said).toContain('⚠️ It reached the bot with no text, though it has some');
      expect(await diagnose(alice, 'ja')).toMatch(/❌ メッセージの内容が届いていません。<t:\d+:R> から \d+ 件の発言が本文なしで届いた/);
    } finally {
      discord.setMessageContent(true);
    }
  });

  it("an admin's /diagnose: the call connected and end-to-end encrypted, the shared request window, the server (en)", async () => {
    const said = await diagnose(bob, 'en-US');
    expect(said).toContain(`✅ This channel is read in ${voiceChannel}.`);
    expect(said).toContain(`🔊 ${voiceChannel} (read by <@${DEFAULT_IDS.bot}>): connected, end-to-end encrypted (DAVE)`);
    expect(said).toMatch(/Last 5 minutes: [1-9]\d* of [1-9]\d* heard within 20 s/);
    expect(said).toMatch(/Requests to the speech service \(shared by every server\): \d+ of 30 left/);
    expect(said).toMatch(/The server's characters this period: \d+ of \d+ left/);
  });
});

describe('npm start: who may move or stop the bot', () => {
  it('a member in no voice channel is refused /leave (ja and en): the bot stays, and speaks what was waiting', async () => {
    await aliceCallsTheBot();
    // Something waits in the queue while carol tries to stop the bot.
    emulator.setLatency('standard', 2_000);
    const sayAt = performance.now();
    const say = await discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: 'say',
      locale: 'en-US',
      options: [{ name: 'text', type: 3, value: 'まだ読みます' }],
    });
    await say.waitForResponse((r) => r.kind === 'callback');
    const opsBefore = discord.botVoiceStates.length;
    expect(await refused(carol, 'leave')).toContain('Move Members');
    expect(await refused(carol, 'leave', { locale: 'ja' })).toContain('メンバーを移動');
    expect(discord.botVoiceStates.length).toBe(opsBefore);
    expect(botChannel()).toBe(DEFAULT_IDS.voice);
    expect(remembered()).toEqual(READING_GENERAL);
    // The waiting /say was not dropped (no "Not read: the bot left" answer): it is spoken.
    const heard = await voice.waitForAudio({ guildId, startedAfter: sayAt, minDurationMs: 100, timeoutMs: 20_000 });
    expect(heard.rmsDb).toBeGreaterThan(-40);
    emulator.setLatency('standard', 0);
    expect(say.responses().map((r) => String(r.data?.content ?? ''))).not.toContainEqual(expect.stringMatching(/leave|退出/i));
  }, 60_000);

  it('/join channel: is refused to a member not in it, and where the bot cannot connect, speak or find room, saying which', async () => {
    const opsBefore = discord.botVoiceStates.length;
    const notThere = await refused(carol, 'join', { channel: VOICE_IDS.voice2 });
    expect(notThere).toContain(`You are not in ${mention(VOICE_IDS.voice2)}`);
    const ja = await refused(carol, 'join', { channel: VOICE_IDS.voice2, locale: 'ja' });
    expect(ja).toContain(`あなたは ${mention(VOICE_IDS.voice2)} にいません`);
    // bob has Move Members and may connect to Staff (his role's overwrite); the bot may not.
    const staff = await refused(bob, 'join', { channel: VOICE_IDS.staff });
    expect(staff).toContain(`I can't connect to ${mention(VOICE_IDS.staff)}: I need the View Channel and Connect`);
    expect(await refused(bob, 'join', { channel: VOICE_IDS.quiet })).toContain(`I can't speak in ${mention(VOICE_IDS.quiet)}`);
    expect(await refused(bob, 'join', { channel: VOICE_IDS.full, locale: 'ja' })).toContain(`${mention(VOICE_IDS.full)} は満員`);
    expect(discord.botVoiceStates.length).toBe(opsBefore);
    expect(botChannel()).toBe(DEFAULT_IDS.voice);
    expect(remembered()).toEqual(READING_GENERAL);
  }, 30_000);

  it('a member elsewhere cannot drag the bot away from listeners; one with Move Members can; one in its channel can /leave', async () => {
    await discord.setVoiceState(carol.id, guildId, VOICE_IDS.voice2);
    const opsBefore = discord.botVoiceStates.length;
    const dragged = await refused(carol, 'join', { from: DEFAULT_IDS.chat });
    expect(dragged).toContain(
      `People are listening in ${mention(DEFAULT_IDS.voice)}; only a member with Move Members in that channel can move me`,
    );
    const ja = await refused(carol, 'join', { from: DEFAULT_IDS.chat, locale: 'ja' });
    expect(ja).toContain(`${mention(DEFAULT_IDS.voice)} で聞いている人がいます`);
    expect(discord.botVoiceStates.length).toBe(opsBefore);
    expect(botChannel()).toBe(DEFAULT_IDS.voice);
    // Asked from #chat: the bot still reads #general.
    expect(remembered()).toEqual(READING_GENERAL);

    const moved = discord.waitForBotVoiceState((s) => s.channelId === VOICE_IDS.voice2, 20_000);
    const { i } = await run(bob, 'join', { channel: VOICE_IDS.voice2 });
    await moved;
    const answer = await i.waitForResponse((r) => r.kind === 'editOriginal', 30_000);
    expect(String(answer.data?.content)).toContain(`Joined ${mention(VOICE_IDS.voice2)}`);
    expect(botChannel()).toBe(VOICE_IDS.voice2);

    const left = discord.waitForBotVoiceState((s) => s.channelId === null, 20_000);
    expect((await run(carol, 'leave')).text).toBe('Left the voice channel.');
    await left;
    expect(botChannel()).toBeNull();
    expect(remembered()).toBeNull();
  }, 60_000);
});
