import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, startFakeDiscord, startFakeVoiceServer, type FakeDiscord, type FakeVoiceServer } from '@yomiage/local-discord';
import { VOICE_IDS, voicePermissionsWorld } from '@yomiage/local-discord/test/voice-permissions-world';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';

// Why the bot is silent, through the real entry point: `npm start` as a child process (its own
// environment and DATA_DIR, no .env) against the loopback Discord (whose Quiet channel denies the
// bot Speak), the TLS voice server with DAVE and the emulator, one bot for the story. A member asks
// /diagnose and, from a message's menu, "Why wasn't this read?"; the details of each cause are
// tested in-process (diagnose.test.ts).
const guildId = DEFAULT_IDS.guild;
const alice = { id: DEFAULT_IDS.alice, username: 'alice', globalName: 'Alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' }; // Moderator: Manage Server
const carol = { id: VOICE_IDS.carol, username: 'carol', globalName: 'Carol' };
type User = { id: string; username: string; globalName?: string };

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
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-diagnose-'));
  bot = await startChildBot({ discord, emulator, dataDir, caCertPem: voice.caCertPem });
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close(), voice?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

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

describe('why the bot is silent, through npm start', () => {
  it('/diagnose from a voice channel where the bot may not speak: Speak is missing and nobody would hear it (ja)', async () => {
    await discord.setVoiceState(carol.id, guildId, VOICE_IDS.quiet);
    const said = await diagnose(carol, 'ja', DEFAULT_IDS.chat);
    expect(said).toContain(`❌ <#${VOICE_IDS.quiet}> でボットに足りない権限:\n・発言: 参加はできても、声が誰にも届きません`);
    expect(said).toContain('❌ このチャンネルは読み上げていません。');
    await discord.setVoiceState(carol.id, guildId, null);
  });

  it("a message read in the call: when and where (en); a muted member's: why not (ja)", async () => {
    await discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
    voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
    const joined = await discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'join', locale: 'en-US' });
    expect(String((await joined.waitForResponse((r) => r.kind === 'editOriginal', 30_000)).data?.content)).toContain('Joined');
    await voice.waitForDave(guildId);
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
