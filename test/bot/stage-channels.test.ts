import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, PERMISSIONS, defaultGuild, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { startFakeVoiceServer, type FakeVoiceServer } from '@yomiage/local-discord';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';
import { standardRequests } from '../support/bot-harness.ts';

// /join in a stage channel, through `npm start` as a child process (loopback Discord, TLS voice
// server, emulator). A stage's audience is not heard: the bot becomes a speaker where it may (Mute
// Members there), else asks to speak and reads nothing until a stage moderator invites it.
const guildId = DEFAULT_IDS.guild;
const STAGE = '1100000000000000160';
const STAGE_MOD = '1100000000000000161';
const STAGE_CLOSED = '1100000000000000162';
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const botId = DEFAULT_IDS.bot;

let emulator: Emulator;
let discord: FakeDiscord;
let voice: FakeVoiceServer;
let dataDir: string;
let bot: ChildBot;

function world() {
  const guild = defaultGuild();
  const bits = (flag: bigint) => String(flag);
  guild.channels.push(
    { id: STAGE, name: 'Stage', type: 13, position: 1 },
    // The bot may make itself a speaker here.
    {
      id: STAGE_MOD,
      name: 'Moderated stage',
      type: 13,
      position: 2,
      permissionOverwrites: [{ id: botId, type: 1, allow: bits(PERMISSIONS.MuteMembers), deny: '0' }],
    },
    // The bot may neither ask to speak nor make itself a speaker here.
    {
      id: STAGE_CLOSED,
      name: 'Closed stage',
      type: 13,
      position: 3,
      permissionOverwrites: [{ id: botId, type: 1, allow: '0', deny: bits(PERMISSIONS.RequestToSpeak) }],
    },
  );
  return guild;
}

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  [emulator, discord] = await Promise.all([
    startEmulator({ control: true }),
    startFakeDiscord({ guilds: [world()], voiceEndpoint: () => voice.endpoint }),
  ]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-stage-'));
  bot = await startChildBot({ discord, emulator, dataDir, caCertPem: voice.caCertPem, env: { AUTO_READ_MAX_AGE_SECONDS: '600' } });
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close(), voice?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

type Option = APIApplicationCommandInteractionDataOption;
async function command(name: string, options: Option[] = [], locale = 'en-US') {
  const interaction = await discord.sendInteraction({ channelId: DEFAULT_IDS.chat, user: alice, name, locale, options });
  return interaction.waitForResponse((r) => r.kind === 'editOriginal' || (r.kind === 'callback' && r.type === 4), 30_000);
}
const botVoice = () => discord.guilds[0]!.voiceStates.find((v) => v.userId === botId);
const texts = () => standardRequests(emulator).map((r) => r.text);

describe('a stage channel', () => {
  it("refuses privately, in the member's language, where the bot may neither ask to speak nor become a speaker", async () => {
    await discord.setVoiceState(alice.id, guildId, STAGE_CLOSED);
    const reply = await command('join', [], 'ja');
    expect(reply.kind).toBe('callback');
    expect(Number(reply.data?.flags ?? 0) & 64).toBe(64);
    expect(String(reply.data?.content)).toContain('スピーカー参加をリクエスト');
    expect(botVoice()).toBeUndefined();
  });

  it('without Mute Members: asks to speak, says it is waiting, reads nothing and attaches /say until invited to speak', async () => {
    await discord.setVoiceState(alice.id, guildId, STAGE);
    const reply = await command('join');
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
    await vi.waitUntil(() => texts().some((t) => t.includes('登壇してからのひとこと')), { timeout: 20_000, interval: 20 });
    const heard = await voice.waitForAudio({ guildId });
    expect(heard.durationMs).toBeGreaterThan(0);
    expect(texts().some((t) => t.includes('聴衆のあいだ'))).toBe(false);

    // Moved back to the audience with lines waiting: the text channel is told why reading stopped,
    // and what waited is dropped, never made (no characters for nobody) nor posted. Proof: once a
    // speaker again, the next line is asked for without them (one queue, in order).
    emulator.setLatency('standard', 1_500);
    const before = texts().length;
    await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: '戻される前の先頭' });
    await vi.waitUntil(
      () =>
        texts()
          .slice(before)
          .some((t) => t.includes('戻される前の先頭')),
      { timeout: 20_000, interval: 20 },
    );
    for (const n of ['一', '二', '三'])
      await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: `待っていた発言${n}` });
    await command('help'); // handled in order: the three are queued by now
    discord.setStageSpeaker(guildId, botId, false);
    const notice = await discord.waitForMessage((m) => m.channelId === DEFAULT_IDS.chat && m.content.includes('聴衆に戻された'));
    expect(notice.content).toContain(`<#${STAGE}>`);
    emulator.setLatency('standard', 0);
    discord.setStageSpeaker(guildId, botId, true);
    await vi.waitFor(() => expect(botVoice()).toMatchObject({ suppress: false }), { timeout: 10_000 });
    await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: 'ふたたび登壇して' });
    await vi.waitUntil(
      () =>
        texts()
          .slice(before)
          .some((t) => t.includes('ふたたび登壇して')),
      { timeout: 20_000, interval: 20 },
    );
    expect(
      texts()
        .slice(before)
        .filter((t) => t.includes('待っていた発言')),
    ).toEqual([]);
  });

  it('with Mute Members there: becomes a speaker at once', async () => {
    await discord.setVoiceState(alice.id, guildId, STAGE_MOD);
    const reply = await command('join');
    expect(String(reply.data?.content)).toContain('Joined');
    expect(String(reply.data?.content)).not.toContain('Waiting');
    await vi.waitFor(() => expect(botVoice()).toMatchObject({ channelId: STAGE_MOD, suppress: false }), { timeout: 10_000 });
    await discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: 'すぐ話せるステージ' });
    await vi.waitUntil(() => texts().some((t) => t.includes('すぐ話せるステージ')), { timeout: 20_000, interval: 20 });
  });
});
