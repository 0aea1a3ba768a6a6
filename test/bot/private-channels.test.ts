import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import { DEFAULT_TOKEN, startEmulator, type Emulator, type RequestLogEntry } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord, type FakeMessage } from '@yomiage/local-discord';
import type { InteractionResponse } from '@yomiage/local-discord/types';
import { startFakeVoiceServer, type FakeVoiceServer } from '@yomiage/local-discord';
import { standardRequests } from '../support/bot-harness.ts';
import { startChildBot, type ChildBot, pendingRows } from '../support/child-bot.ts';
import { getText } from '../support/ops.ts';

// One channel's text is never posted in another: through `npm start` as a child process, two
// auto-read channels post MP3s (#chat plays a staff-only channel, #general everyone's). A staff
// line and a #general line queued together must not become one request whose MP3 is posted in
// #general, first in no voice channel (each line posted in its own channel), then in one (played
// there, nothing posted). The bot runs without ffmpeg (FFMPEG_PATH pointing nowhere): it needs none,
// and its METRICS_PORT says so to a load balancer: ready, not degraded.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const STAFF = DEFAULT_IDS.chat;
const GENERAL = DEFAULT_IDS.general;

let emulator: Emulator;
let discord: FakeDiscord;
let voice: FakeVoiceServer;
let dataDir: string;
let bot: ChildBot;

async function command(name: string, options: APIApplicationCommandInteractionDataOption[], channelId: string): Promise<string> {
  const i = await discord.sendInteraction({ channelId, user: bob, name, locale: 'en-US', options });
  const answered = (r: InteractionResponse) => (r.kind === 'callback' || r.kind === 'editOriginal') && r.data?.content !== undefined;
  return String((await i.waitForResponse(answered, 30_000)).data?.content);
}

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  [emulator, discord] = await Promise.all([startEmulator({ control: true }), startFakeDiscord({ voiceEndpoint: () => voice.endpoint })]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-private-'));
  bot = await startChildBot({
    discord,
    emulator,
    dataDir,
    caCertPem: voice.caCertPem,
    env: { AUTO_READ_MAX_AGE_SECONDS: '600', FFMPEG_PATH: join(dataDir, 'no-such-ffmpeg'), METRICS_PORT: '0' },
  });
  const mp3 = [{ name: 'add', type: 1, options: [{ name: 'mp3', type: 5, value: true }] }] as APIApplicationCommandInteractionDataOption[];
  for (const channelId of [STAFF, GENERAL]) expect(await command('autoread', mp3, channelId)).toContain('costs characters');
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close(), voice?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

/** The MP3 the emulator made for the logged standard request whose text includes `part` (asked again from another address). */
async function mp3Including(part: string): Promise<Buffer> {
  const spoke = (r: RequestLogEntry) => r.target === 'standard' && r.status === 200 && (r.body as { text: string }).text.includes(part);
  const entry = emulator.requests().find(spoke)!;
  const res = await fetch(`${emulator.baseUrl}/text_to_speech_api/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', token: DEFAULT_TOKEN, 'x-forwarded-for': '10.1.1.2' },
    body: JSON.stringify(entry.body),
  });
  const { url } = (await res.json()) as { url: string };
  return Buffer.from(await (await fetch(url)).arrayBuffer());
}

/** Each channel's reply carries its own line's audio and not the other channel's (clips of a batch are joined in one file). */
async function expectOwnAudioOnly(
  replies: Record<'staff' | 'general', FakeMessage | undefined>,
  texts: Record<'staff' | 'general', string>,
) {
  const [staffMp3, generalMp3] = await Promise.all([mp3Including(texts.staff), mp3Including(texts.general)]);
  const generalFile = replies.general!.attachments[0]!.data;
  const staffFile = replies.staff!.attachments[0]!.data;
  expect(generalFile.includes(generalMp3)).toBe(true);
  expect(generalFile.includes(staffMp3)).toBe(false);
  expect(staffFile.includes(staffMp3)).toBe(true);
  expect(staffFile.includes(generalMp3)).toBe(false);
}

/**
 * While a first message's request is slow, a staff line then a #general line are queued behind it
 * (so they would be formed into the next request together); then both are delivered.
 */
async function staffThenGeneral(n: number) {
  const staffText = `スタッフ${n}、BANの相談です`;
  const generalText = `みなさん${n}、こんにちは`;
  const before = standardRequests(emulator).length;
  emulator.setLatency('standard', 1_500);
  await discord.sendMessage({ channelId: GENERAL, author: alice, content: `先に読む${n}` });
  await vi.waitUntil(
    () =>
      standardRequests(emulator)
        .slice(before)
        .some((r) => r.text.includes(`先に読む${n}`)),
    { timeout: 15_000, interval: 10 },
  );
  const staff = await discord.sendMessage({ channelId: STAFF, author: bob, content: staffText });
  const general = await discord.sendMessage({ channelId: GENERAL, author: alice, content: generalText });
  await vi.waitUntil(() => pendingRows(dataDir) === 3, { timeout: 10_000, interval: 10, message: 'all three accepted' });
  emulator.setLatency('standard', 0);
  // Finished (delivered, or told) once nothing is left on disk.
  await vi.waitUntil(() => pendingRows(dataDir) === 0, { timeout: 20_000, interval: 20, message: 'all three delivered' });
  const replyTo = (id: string) => discord.messages.find((m) => m.attachments.length > 0 && m.messageReference?.message_id === id);
  const requests = standardRequests(emulator)
    .slice(before)
    .map((r) => r.text);
  return { staffText, generalText, requests, staffReply: replyTo(staff.id), generalReply: replyTo(general.id) };
}

describe('METRICS_PORT of npm start without ffmpeg', () => {
  it('/readyz: the bot is ready, not degraded (it needs no ffmpeg)', async () => {
    const url = String(bot.logs.find((l) => l.msg === 'metrics and health checks listening')?.url);
    const ready = await getText(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toEqual({ status: 'ready', degraded: [], checks: { gateway: { ok: true }, database: { ok: true } } });
  });
});

describe('auto-read channels that post MP3s: one request per audience', () => {
  it('not in voice: the staff line and the #general line are separate requests, each posted in its own channel', async () => {
    const { staffText, generalText, requests, staffReply, generalReply } = await staffThenGeneral(1);
    expect(requests.filter((t) => t.includes(staffText) && t.includes(generalText))).toEqual([]);
    // The MP3 posted in #general was made from #general's text alone; the staff line's went to the staff channel.
    expect(generalReply?.channelId).toBe(GENERAL);
    expect(staffReply?.channelId).toBe(STAFF);
    await expectOwnAudioOnly({ staff: staffReply, general: generalReply }, { staff: staffText, general: generalText });
  }, 60_000);

  it('in voice without ffmpeg: the lines are played there (an uncached MP3 needs none), and no file is posted', async () => {
    await discord.setVoiceState(bob.id, DEFAULT_IDS.guild, DEFAULT_IDS.voice);
    expect(await command('join', [], GENERAL)).toContain('Joined');
    const started = performance.now();
    const { staffReply, generalReply } = await staffThenGeneral(2);
    expect(staffReply).toBeUndefined();
    expect(generalReply).toBeUndefined();
    await voice.waitForAudio({ guildId: DEFAULT_IDS.guild, startedAfter: started, minDurationMs: 300, timeoutMs: 20_000 });
  }, 60_000);
});
